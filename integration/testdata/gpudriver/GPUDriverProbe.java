// GPUDriverProbe drives Flink's own GPU driver the way a TaskManager does: it builds the driver
// with GPUDriverFactory from the external resource's parameters (key=value arguments, the
// "external-resource.gpu.param." prefix already removed, as Flink's ExternalResourceUtils passes
// them), asks it for AMOUNT GPUs and prints the indices it got, sorted, on one line. It then waits
// until stdin closes, so that a coordination file keeps the devices for this JVM meanwhile. A
// failure prints "ERROR: " and the driver's message and exits 1.
//
// Usage: java -cp <flink lib>/*:<gpu plugin jar>:<dir> GPUDriverProbe AMOUNT [key=value ...]
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.externalresource.gpu.GPUDriverFactory;

public final class GPUDriverProbe {
    public static void main(String[] args) throws Exception {
        long amount = Long.parseLong(args[0]);
        Configuration conf = new Configuration();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            conf.setString(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        List<String> indices = new ArrayList<>();
        try {
            ExternalResourceDriver driver = new GPUDriverFactory().createExternalResourceDriver(conf);
            Set<? extends ExternalResourceInfo> infos = driver.retrieveResourceInfo(amount);
            for (ExternalResourceInfo info : infos) {
                indices.add(info.getProperty("index").orElse("?"));
            }
        } catch (Exception e) {
            System.out.println("ERROR: " + e);
            System.out.flush();
            System.exit(1);
        }
        Collections.sort(indices);
        System.out.println("GPUS: " + String.join(",", indices));
        System.out.flush();
        while (System.in.read() >= 0) {
            // hold the devices until stdin closes
        }
    }
}
