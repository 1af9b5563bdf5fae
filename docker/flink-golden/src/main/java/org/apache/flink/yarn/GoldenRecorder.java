package org.apache.flink.yarn;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;
import org.apache.flink.runtime.resourcemanager.WorkerResourceSpec;
import org.apache.flink.yarn.configuration.YarnConfigOptions;
import org.apache.flink.yarn.entrypoint.YarnWorkerResourceSpecFactory;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.impl.pb.ProtoUtils;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeSet;

/**
 * Records, for each test configuration directory, the TaskManager container Flink's YARN
 * ApplicationMaster would request, or the exception Flink throws instead.
 *
 * <p>Usage: {@code GoldenRecorder CONFIGS_DIR OUT_DIR}. Each sub-directory of CONFIGS_DIR holds a
 * flink-conf.yaml and/or config.yaml (loaded with GlobalConfiguration, as Flink's client and AM
 * load them) and optionally resource-types.xml (the cluster's resource types; without it, every
 * yarn.config-key of the configuration is declared without a unit). The steps are the AM's: Flink
 * 1.x's mapping of the legacy heap options, YarnWorkerResourceSpecFactory,
 * processSpecFromWorkerResourceSpec, then TaskExecutorProcessSpecContainerResourcePriorityAdapter,
 * whose Resource goes through Hadoop's protobuf form, as the ResourceManager reads it.
 *
 * <p>Lives in Flink's package because the adapter is package-private.
 */
public final class GoldenRecorder {

    private GoldenRecorder() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: GoldenRecorder CONFIGS_DIR OUT_DIR");
            System.exit(2);
        }
        File configs = new File(args[0]);
        File out = new File(args[1]);
        if (!out.isDirectory() && !out.mkdirs()) {
            throw new IOException("cannot create " + out);
        }
        File[] dirs = configs.listFiles(File::isDirectory);
        if (dirs == null) {
            throw new IOException("cannot list " + configs);
        }
        Arrays.sort(dirs);
        for (File dir : dirs) {
            // Paths in Flink's messages are written relative to the configurations' directory, so
            // that recordings do not depend on where the checkout is.
            String json =
                    record(dir)
                            .replace(configs.getAbsolutePath() + File.separator, "configs/");
            Files.write(
                    new File(out, dir.getName() + ".json").toPath(),
                    json.getBytes(StandardCharsets.UTF_8));
            System.out.println(dir.getName() + ": " + json.replace('\n', ' '));
        }
    }

    static String record(File dir) {
        String tm = recordTaskManager(dir);
        String jm = recordJobManager(dir);
        return tm.substring(0, tm.length() - 2) + ",\n  \"jobManager\": " + jm + "\n}\n";
    }

    /** The ApplicationMaster (JobManager) container, as Flink's YARN client derives it. */
    static String recordJobManager(File dir) {
        try {
            Configuration conf = GlobalConfiguration.loadConfiguration(dir.getAbsolutePath());
            Class<?> utils = Class.forName("org.apache.flink.runtime.jobmanager.JobManagerProcessUtils");
            Object spec;
            try {
                Method m =
                        utils.getMethod(
                                "processSpecFromConfigWithNewOptionToInterpretLegacyHeap",
                                Configuration.class,
                                org.apache.flink.configuration.ConfigOption.class);
                spec =
                        m.invoke(
                                null,
                                conf,
                                org.apache.flink.configuration.JobManagerOptions
                                        .TOTAL_PROCESS_MEMORY);
            } catch (NoSuchMethodException e) {
                spec = utils.getMethod("processSpecFromConfig", Configuration.class).invoke(null, conf);
            }
            org.apache.flink.runtime.util.config.memory.ProcessMemorySpec p =
                    (org.apache.flink.runtime.util.config.memory.ProcessMemorySpec) spec;
            return "{\"memoryMB\": "
                    + p.getTotalProcessMemorySize().getMebiBytes()
                    + ", \"vcores\": "
                    + conf.get(YarnConfigOptions.APP_MASTER_VCORES)
                    + ", \"jvmHeap\": "
                    + p.getJvmHeapMemorySize().getBytes()
                    + ", \"offHeap\": "
                    + p.getJvmDirectMemorySize().getBytes()
                    + ", \"jvmMetaspace\": "
                    + p.getJvmMetaspaceSize().getBytes()
                    + ", \"jvmOverhead\": "
                    + p.getJvmOverheadSize().getBytes()
                    + ", \"totalProcess\": "
                    + p.getTotalProcessMemorySize().getBytes()
                    + "}";
        } catch (Throwable t) {
            while (t instanceof InvocationTargetException && t.getCause() != null) {
                t = t.getCause();
            }
            return "{\"error\": {\"class\": "
                    + str(t.getClass().getName())
                    + ", \"message\": "
                    + str(String.valueOf(t.getMessage()))
                    + "}}";
        }
    }

    static String recordTaskManager(File dir) {
        StringBuilder sb = new StringBuilder("{\n");
        try {
            Configuration conf = GlobalConfiguration.loadConfiguration(dir.getAbsolutePath());
            Map<String, String> configKeys =
                    ExternalResourceUtils.getExternalResourceConfigurationKeys(
                            conf, YarnConfigOptions.EXTERNAL_RESOURCE_YARN_CONFIG_KEY_SUFFIX);
            declareResourceTypes(dir, configKeys);

            Configuration effective = mapLegacyHeap(conf);
            WorkerResourceSpec worker =
                    YarnWorkerResourceSpecFactory.INSTANCE.createDefaultWorkerResourceSpec(
                            effective);
            TaskExecutorProcessSpec spec =
                    TaskExecutorProcessUtils.processSpecFromWorkerResourceSpec(effective, worker);

            Resource max = Resource.newInstance(Long.MAX_VALUE, Integer.MAX_VALUE);
            for (ResourceInformation ri : max.getResources()) {
                if (!ri.getName().equals(ResourceInformation.MEMORY_URI)
                        && !ri.getName().equals(ResourceInformation.VCORES_URI)) {
                    max.setResourceValue(ri.getName(), Long.MAX_VALUE);
                }
            }
            TaskExecutorProcessSpecContainerResourcePriorityAdapter adapter =
                    new TaskExecutorProcessSpecContainerResourcePriorityAdapter(max, configKeys);
            Resource requested =
                    adapter.getPriorityAndResource(spec)
                            .orElseThrow(() -> new IllegalStateException("no resource adapted"))
                            .getResource();
            // What the ResourceManager reads: the request's protobuf form, decoded with the
            // cluster's resource types.
            Resource rm = ProtoUtils.convertFromProtoFormat(ProtoUtils.convertToProtoFormat(requested));

            sb.append("  \"memoryMB\": ").append(rm.getMemorySize()).append(",\n");
            sb.append("  \"vcores\": ").append(rm.getVirtualCores()).append(",\n");
            sb.append("  \"resources\": [");
            boolean first = true;
            for (ResourceInformation ri : rm.getResources()) {
                String name = ri.getName();
                if (name.equals(ResourceInformation.MEMORY_URI)
                        || name.equals(ResourceInformation.VCORES_URI)) {
                    continue;
                }
                ResourceInformation sent = requested.getResourceInformation(name);
                sb.append(first ? "\n" : ",\n");
                first = false;
                sb.append("    {\"name\": ").append(str(name));
                sb.append(", \"sentValue\": ").append(sent.getValue());
                sb.append(", \"sentUnits\": ").append(str(sent.getUnits()));
                sb.append(", \"value\": ").append(ri.getValue());
                sb.append(", \"units\": ").append(str(ri.getUnits())).append("}");
            }
            sb.append(first ? "],\n" : "\n  ],\n");
            sb.append("  \"memory\": {");
            // JVM heap = framework heap + task heap; direct = framework off-heap + task
            // off-heap + network (the framework getters are package-private).
            sb.append("\"frameworkHeap\": ")
                    .append(
                            spec.getJvmHeapMemorySize().getBytes()
                                    - spec.getTaskHeapSize().getBytes());
            sb.append(", \"frameworkOffHeap\": ")
                    .append(
                            spec.getJvmDirectMemorySize().getBytes()
                                    - spec.getTaskOffHeapSize().getBytes()
                                    - spec.getNetworkMemSize().getBytes());
            sb.append(", \"taskHeap\": ").append(spec.getTaskHeapSize().getBytes());
            sb.append(", \"taskOffHeap\": ").append(spec.getTaskOffHeapSize().getBytes());
            sb.append(", \"network\": ").append(spec.getNetworkMemSize().getBytes());
            sb.append(", \"managed\": ").append(spec.getManagedMemorySize().getBytes());
            sb.append(", \"jvmMetaspace\": ").append(spec.getJvmMetaspaceSize().getBytes());
            sb.append(", \"jvmOverhead\": ").append(spec.getJvmOverheadSize().getBytes());
            sb.append(", \"totalFlink\": ").append(spec.getTotalFlinkMemorySize().getBytes());
            sb.append(", \"totalProcess\": ")
                    .append(spec.getTotalProcessMemorySize().getBytes());
            sb.append("}\n");
        } catch (Throwable t) {
            sb.setLength(0);
            sb.append("{\n");
            sb.append("  \"error\": {\"class\": ").append(str(t.getClass().getName()));
            sb.append(", \"message\": ").append(str(String.valueOf(t.getMessage())));
            Throwable cause = t.getCause();
            if (cause != null && cause != t) {
                sb.append(", \"cause\": ").append(str(String.valueOf(cause.getMessage())));
            }
            sb.append("}\n");
        }
        return sb.append("}\n").toString();
    }

    /** Flink 1.x maps taskmanager.heap.size/.mb to the process size; Flink 2.0 removed it. */
    static Configuration mapLegacyHeap(Configuration conf) throws Throwable {
        Method m;
        try {
            m =
                    TaskExecutorProcessUtils.class.getMethod(
                            "getConfigurationMapLegacyTaskManagerHeapSizeToConfigOption",
                            Configuration.class,
                            org.apache.flink.configuration.ConfigOption.class);
        } catch (NoSuchMethodException e) {
            return conf;
        }
        try {
            return (Configuration) m.invoke(null, conf, TaskManagerOptions.TOTAL_PROCESS_MEMORY);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    static void declareResourceTypes(File dir, Map<String, String> configKeys) {
        org.apache.hadoop.conf.Configuration hc = new org.apache.hadoop.conf.Configuration(false);
        File xml = new File(dir, "resource-types.xml");
        if (xml.isFile()) {
            hc.addResource(new Path(xml.getAbsolutePath()));
        } else {
            hc.set("yarn.resource-types", String.join(",", new TreeSet<>(configKeys.values())));
        }
        ResourceUtils.resetResourceTypes(hc);
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

}
