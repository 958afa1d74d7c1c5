package org.retrieval.opensearchnode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.ExtensiblePlugin;
import org.opensearch.plugins.Plugin;

/**
 * One single-node OpenSearch 2.19 cluster with its plugins on the classpath.
 *
 * <pre>java -cp 'target/opensearch-node.jar:target/lib/*:target/plugins/*' \
 *     org.retrieval.opensearchnode.NodeLauncher HOME [-Ekey=value ...]</pre>
 *
 * HOME holds data/, logs/ (logs/http.ports once HTTP is bound, logs/opensearch.log) and
 * empty config/, modules/, plugins/. The node stops when its standard input closes, or on SIGTERM.
 */
public final class NodeLauncher {
    /** Classpath plugins; the optional ones are skipped when their jars are absent. */
    private static final String[][] PLUGINS = {
        {"org.opensearch.transport.Netty4Plugin", "required"},
        {"org.opensearch.analysis.common.CommonAnalysisPlugin", "required"},
        {"org.opensearch.painless.PainlessPlugin", "required"},
        {"org.opensearch.knn.plugin.KNNPlugin", "optional"},
        {"org.opensearch.neuralsearch.plugin.NeuralSearch", "optional"},
    };

    static final class ClasspathNode extends Node {
        ClasspathNode(Environment env, Collection<Class<? extends Plugin>> plugins) {
            super(env, plugins, true);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: NodeLauncher HOME [-Ekey=value ...]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        for (String dir : new String[] {"config", "data", "logs", "modules", "plugins"}) {
            Files.createDirectories(home.resolve(dir));
        }
        // read by log4j2.xml in this jar: set before any logger exists
        System.setProperty("opensearch.node.logs", home.resolve("logs").toString());

        Settings.Builder settings = Settings.builder()
            .put("cluster.name", "retrieval-claims")
            .put("node.name", "node-1")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", "9200-9300")
            .put("transport.port", "9300-9400")
            .put("node.portsfile", true)
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString());
        for (int i = 1; i < args.length; i++) {
            String arg = args[i].startsWith("-E") ? args[i].substring(2) : args[i];
            int eq = arg.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("expected -Ekey=value, got " + args[i]);
            settings.put(arg.substring(0, eq), arg.substring(eq + 1));
        }

        List<Class<? extends Plugin>> plugins = new ArrayList<>();
        for (String[] p : PLUGINS) {
            try {
                plugins.add(Class.forName(p[0]).asSubclass(Plugin.class));
            } catch (ClassNotFoundException e) {
                if (p[1].equals("required")) throw e;
            }
        }
        // Classpath plugins never get loadExtensions(); painless keeps its allowlists in a static
        // map, so feed it the extensions (k-NN's scoring functions) found on the classpath.
        new org.opensearch.painless.PainlessPlugin().loadExtensions(new ExtensiblePlugin.ExtensionLoader() {
            @Override
            public <T> List<T> loadExtensions(Class<T> type) {
                List<T> found = new ArrayList<>();
                ServiceLoader.load(type, NodeLauncher.class.getClassLoader()).forEach(found::add);
                return found;
            }
        });

        Environment env = InternalSettingsPreparer.prepareEnvironment(
            settings.build(), Collections.emptyMap(), home.resolve("config"), () -> "node-1");
        Node node = new ClasspathNode(env, plugins);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> close(node), "node-stopper")); // SIGTERM, Ctrl-C
        node.start();
        System.out.println("started " + home);
        // Exit when the parent closes our stdin (or dies): no orphan nodes.
        while (System.in.read() != -1) {
            // discard
        }
        close(node);
        System.exit(0);
    }

    private static void close(Node node) {
        try {
            node.close(); // a no-op once closed
            node.awaitClose(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            e.printStackTrace();
        }
    }
}
