# The Prometheus image of compose.yaml's serve profile: Debian's prometheus package (bookworm's
# 2.42) on the Debian base that docker/image makes with mmdebstrap, so that no container registry
# is needed. docker/image builds it (target prometheus); its context is empty.
#   docker run --rm --network host -v "$PWD/prometheus.yml:/etc/prometheus/prometheus.yml:ro" \
#     localhost/yarn-er/prometheus:bookworm --web.listen-address=127.0.0.1:9090
# Under podman, build with --format docker (as docker/image does), like the other images.

# BASE: an image with apt and Debian bookworm's sources (the default: docker/image's base).
ARG BASE=localhost/yarn-er/base:bookworm
FROM ${BASE}
# DEBIAN_MIRROR: where apt gets the packages (empty: the base's own sources.list).
ARG DEBIAN_MIRROR=
# CA_CERTS: PEM certificates to trust besides the base's (a TLS-intercepting proxy's CA, an
# https mirror's).
ARG CA_CERTS=
LABEL org.opencontainers.image.title="yarn-er Prometheus" \
      org.opencontainers.image.description="Debian's prometheus package, for the serve profile of yarn-er's docker/compose.yaml"
USER root
# --no-install-recommends: the package recommends prometheus-node-exporter, not needed here. The
# package's postinst makes the system user prometheus and its storage /var/lib/prometheus/metrics2
# (Debian's default --storage.tsdb.path); the package lists and apt's caches are removed. dpkg
# leaves out moment-timezone's raw data (212 MB that the web UI never loads: it loads
# moment-timezone-with-data.min.js), the manuals and the documentation but its copyright files.
RUN set -eu; \
    if [ -n "$CA_CERTS" ]; then \
      mkdir -p /usr/local/share/ca-certificates; \
      printf '%s\n' "$CA_CERTS" | awk '/-----BEGIN CERTIFICATE-----/ { n++; f = sprintf("/usr/local/share/ca-certificates/yarn-er-build-%d.crt", n) } f { print > f } /-----END CERTIFICATE-----/ { close(f); f = "" }'; \
      update-ca-certificates >/dev/null; \
    fi; \
    printf '%s\n' 'path-exclude=/usr/share/javascript/moment-timezone/data/*' \
      'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
      >/etc/dpkg/dpkg.cfg.d/yarn-er-prometheus; \
    if [ -n "$DEBIAN_MIRROR" ]; then printf 'deb %s bookworm main\n' "$DEBIAN_MIRROR" >/etc/apt/sources.list; fi; \
    apt-get update -q; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus; \
    apt-get clean; rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin; \
    test -x /usr/bin/prometheus; \
    /usr/bin/prometheus --version
USER prometheus
WORKDIR /var/lib/prometheus
EXPOSE 9090
STOPSIGNAL SIGTERM
# Debian's defaults: --config.file=/etc/prometheus/prometheus.yml,
# --storage.tsdb.path=/var/lib/prometheus/metrics2/ (the prometheus user's), listening on :9090.
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml"]
