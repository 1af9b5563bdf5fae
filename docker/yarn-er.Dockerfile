# The yarn-er image: the static yarn-er binary (CGO_ENABLED=0: no NVML backend; discovery reads
# procfs and nvidia-smi) and the small ApplicationMaster binary submit stages beside it, nothing
# else. docker/image builds it; its context is a directory holding the binaries and an empty tmp/.
#   docker run --rm --network host -v "$HADOOP_CONF_DIR:/conf:ro" -e HADOOP_CONF_DIR=/conf \
#     -e HADOOP_USER_NAME=yarn localhost/yarn-er/yarn-er cluster nodes
FROM scratch
LABEL org.opencontainers.image.title="yarn-er" \
      org.opencontainers.image.description="GPU and FPGA jobs on Hadoop YARN: translate, preflight, submit, discover"
COPY yarn-er yarn-er-am /usr/local/bin/
COPY tmp/ /tmp/
ENV PATH=/usr/local/bin TMPDIR=/tmp HOME=/tmp NO_COLOR=1
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/yarn-er"]
CMD ["--help"]
