package dev.yarner.flinke2e;

import java.io.IOException;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * A Flink job that shows which GPUs each TaskManager got.
 *
 * <p>Every parallel instance of its map function, when it opens, writes one JSON line to
 * {@code <out>/report-<subtask>-<attempt>.json}: the TaskManager's resource id (the YARN container id
 * on YARN), the container id and pid of the TaskManager JVM, the GPU indices Flink's GPU driver
 * found ({@code getRuntimeContext().getExternalResourceInfos("gpu")}) and {@code CUDA_VISIBLE_DEVICES}.
 * The directory must be one that every TaskManager and the reader share (a local directory when
 * all NodeManagers run on one host, as in the mini-YARN).
 *
 * <p>With {@code --hold FILE} each instance then waits until FILE exists (at most
 * {@code --hold-timeout} seconds), so that the TaskManagers stay up while a test inspects the
 * cluster or kills one of them. The job ends when every instance has passed.
 *
 * <pre>
 * flink run-application -t yarn-application flink-gpu-report-job.jar --out DIR [--parallelism 2]
 *     [--hold FILE] [--hold-timeout 300] [--resource gpu]
 * </pre>
 */
public final class GpuReportJob {
    private GpuReportJob() {}

    /** Entry point; see the class comment for the arguments. */
    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(o.parallelism);
        env.fromSequence(0, o.parallelism - 1)
                .name("subtasks")
                .map(new ReportGpus(o.out, o.resource, o.hold, o.holdTimeoutSeconds))
                .name("report-gpus")
                .sinkTo(new DiscardingSink<>())
                .name("discard");
        env.execute("yarn-er GPU report");
    }

    /** The command line. */
    static final class Options {
        String out;
        int parallelism = 2;
        String hold;
        long holdTimeoutSeconds = 300;
        String resource = "gpu";

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(a + " needs a value");
                }
                String v = args[++i];
                switch (a) {
                    case "--out":
                        o.out = v;
                        break;
                    case "--parallelism":
                        o.parallelism = positive(a, v);
                        break;
                    case "--hold":
                        o.hold = v;
                        break;
                    case "--hold-timeout":
                        o.holdTimeoutSeconds = positive(a, v);
                        break;
                    case "--resource":
                        o.resource = v;
                        break;
                    default:
                        throw new IllegalArgumentException(
                                "unknown argument " + a
                                        + " (want --out DIR, --parallelism N, --hold FILE,"
                                        + " --hold-timeout SECONDS, --resource NAME)");
                }
            }
            if (o.out == null || o.out.isEmpty()) {
                throw new IllegalArgumentException("--out DIR is required: where the reports go");
            }
            return o;
        }

        private static int positive(String flag, String v) {
            try {
                int n = Integer.parseInt(v);
                if (n > 0) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException(flag + " " + v + ": want a whole number above 0");
        }
    }

    /** Writes the report of its TaskManager when it opens, then passes records through. */
    static final class ReportGpus extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;

        private final String out;
        private final String resource;
        private final String hold;
        private final long holdTimeoutSeconds;

        ReportGpus(String out, String resource, String hold, long holdTimeoutSeconds) {
            this.out = out;
            this.resource = resource;
            this.hold = hold;
            this.holdTimeoutSeconds = holdTimeoutSeconds;
        }

        @Override
        public void open(OpenContext ctx) throws Exception {
            int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
            Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos(resource);
            List<String> indices = new ArrayList<>();
            for (ExternalResourceInfo info : infos) {
                indices.add(info.getProperty("index").orElse("?"));
            }
            Collections.sort(indices);
            Map<String, String> vars = getRuntimeContext().getMetricGroup().getAllVariables();

            StringBuilder b = new StringBuilder(256).append('{');
            field(b, "subtask", subtask).append(',');
            field(b, "attempt", attempt).append(',');
            field(b, "resourceId", vars.get("<tm_id>")).append(',');
            field(b, "containerId", System.getenv("CONTAINER_ID")).append(',');
            field(b, "host", InetAddress.getLocalHost().getHostName()).append(',');
            field(b, "pid", ProcessHandle.current().pid()).append(',');
            field(b, "jvm", ManagementFactory.getRuntimeMXBean().getName()).append(',');
            b.append('"').append(resource).append("\":[");
            for (int i = 0; i < indices.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                quote(b, indices.get(i));
            }
            b.append("],");
            field(b, "cudaVisibleDevices", System.getenv("CUDA_VISIBLE_DEVICES"));
            b.append("}\n");
            write(Paths.get(out, "report-" + subtask + "-" + attempt + ".json"), b.toString());

            if (hold != null) {
                long deadline = System.nanoTime() + holdTimeoutSeconds * 1_000_000_000L;
                Path release = Paths.get(hold);
                while (!Files.exists(release) && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                }
            }
        }

        @Override
        public Long map(Long value) {
            return value;
        }

        /** Writes the report atomically: readers never see half a line. */
        private static void write(Path target, String text) throws IOException {
            Path tmp = target.resolveSibling("." + target.getFileName() + ".tmp");
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                w.write(text);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }

        private static StringBuilder field(StringBuilder b, String name, Object value) {
            quote(b, name).append(':');
            if (value == null) {
                return b.append("null");
            }
            if (value instanceof Number) {
                return b.append(value);
            }
            return quote(b, value.toString());
        }

        private static StringBuilder quote(StringBuilder b, String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    b.append('\\').append(c);
                } else if (c < 0x20) {
                    b.append(String.format("\\u%04x", (int) c));
                } else {
                    b.append(c);
                }
            }
            return b.append('"');
        }
    }
}
