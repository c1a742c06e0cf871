package hivemind;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Config;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.Logging;
import org.neo4j.driver.exceptions.AuthenticationException;
import org.neo4j.io.ByteUnit;

/**
 * A throw-away Neo4j Community server for tests: embedded DBMS, Bolt only, auth on.
 *
 * <pre>
 * java -Xmx512m -jar neo4j-server.jar --port 7687 --data DIR (--password PW | --password-env VAR)
 *      [--host 127.0.0.1] [--pagecache-mb 256]
 * </pre>
 *
 * <p>Prints {@code READY bolt://HOST:PORT} on stdout once Bolt accepts connections, the
 * {@code neo4j} user's password has been set, and a Bolt login with it succeeds while a login
 * with a wrong password is refused. SIGTERM (or Ctrl-C) shuts the DBMS down cleanly.
 */
public final class Neo4jServer {
    private static final String USER = "neo4j";

    private Neo4jServer() {}

    public static void main(String[] args) {
        Options opts;
        try {
            opts = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("neo4j-server: " + e.getMessage());
            System.err.println(
                    "usage: Neo4jServer --port N --data DIR (--password PW | --password-env VAR)"
                            + " [--host 127.0.0.1] [--pagecache-mb 256]");
            System.exit(2);
            return;
        }

        AtomicReference<DatabaseManagementService> service = new AtomicReference<>();
        CountDownLatch built = new CountDownLatch(1); // build() has returned or failed
        CountDownLatch stopped = new CountDownLatch(1); // the shutdown hook has begun
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> shutdown(service, built, stopped), "neo4j-shutdown"));

        try {
            Files.createDirectories(opts.data);
            log("pid " + ProcessHandle.current().pid() + ": starting Neo4j " + neo4jVersion() + " in " + opts.data);
            DatabaseManagementService dbms;
            try {
                dbms = build(opts);
                service.set(dbms);
            } finally {
                built.countDown();
            }
            if (stopped.getCount() == 0) {
                return; // SIGTERM came during build(); the shutdown hook stops the DBMS
            }

            log("DBMS started; setting the password of user " + USER);
            setPassword(dbms, opts.password);
            waitForBolt(opts.host, opts.port, 30_000);
            log("checking Bolt logins");
            checkLogin(opts);

            System.out.println("READY bolt://" + opts.host + ":" + opts.port);
            System.out.flush();
        } catch (Throwable t) {
            System.err.println("neo4j-server: startup failed: " + t);
            t.printStackTrace();
            System.err.flush();
            // Runs the shutdown hook, which stops the DBMS if it got that far.
            System.exit(1);
        }

        try {
            stopped.await(); // until SIGTERM/SIGINT runs the shutdown hook
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static DatabaseManagementService build(Options opts) {
        return new DatabaseManagementServiceBuilder(opts.data)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(opts.host, opts.port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(opts.host, opts.port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                // No lock-out after failed logins (default: 3 in a row lock the user for 5 s), so that
                // tests of wrong passwords cannot make the next test's good login fail.
                .setConfig(GraphDatabaseSettings.auth_max_failed_attempts, 0)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(opts.pagecacheMb))
                .setConfig(GraphDatabaseSettings.tx_state_max_off_heap_memory, ByteUnit.mebiBytes(128))
                // Small, non-preallocated transaction logs: a test server needs no 256 MiB files.
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(16))
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Bolt's Netty event loops otherwise idle 5 s each (twice) before shutdown completes.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .build();
    }

    /** Sets the neo4j user's password (the system database starts it as neo4j/neo4j, change required). */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME)
                    .executeTransactionally(
                            "ALTER USER " + USER + " SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // A reused data directory may already carry this very password; Neo4j refuses to "change" to it.
            if (String.valueOf(e.getMessage()).contains("cannot be the same")) {
                return;
            }
            throw e;
        }
    }

    private static void waitForBolt(String host, int port, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Bolt does not accept connections on " + host + ":" + port, e);
                }
                Thread.sleep(100);
            }
        }
    }

    /** Over Bolt: a wrong password must be refused and the real one must work. */
    private static void checkLogin(Options opts) {
        String uri = "bolt://" + opts.host + ":" + opts.port;
        Config config = Config.builder().withoutEncryption().withLogging(Logging.none()).build();
        try (Driver driver = GraphDatabase.driver(uri, AuthTokens.basic(USER, opts.password + "-wrong"), config)) {
            driver.verifyConnectivity();
            throw new IllegalStateException("a wrong password was accepted");
        } catch (AuthenticationException expected) {
            // refused, as it should be
        }
        try (Driver driver = GraphDatabase.driver(uri, AuthTokens.basic(USER, opts.password), config)) {
            long one = driver.executableQuery("RETURN 1 AS one").execute().records().get(0).get("one").asLong();
            if (one != 1) {
                throw new IllegalStateException("RETURN 1 gave " + one);
            }
        }
    }

    private static void shutdown(
            AtomicReference<DatabaseManagementService> service, CountDownLatch built, CountDownLatch stopped) {
        stopped.countDown();
        try {
            // Let a build() in progress finish, so that what it started is shut down, not cut off.
            built.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        DatabaseManagementService dbms = service.getAndSet(null);
        if (dbms == null) {
            return;
        }
        log("shutting down");
        try {
            dbms.shutdown();
            log("stopped");
        } catch (Throwable t) {
            System.err.println("neo4j-server: shutdown failed: " + t);
        }
    }

    private static String neo4jVersion() {
        Package p = DatabaseManagementService.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        return v == null ? "(unknown version)" : v;
    }

    private static void log(String message) {
        System.out.println(java.time.Instant.now() + " neo4j-server: " + message);
        System.out.flush();
    }

    private static final class Options {
        String host = "127.0.0.1";
        int port = -1;
        Path data;
        String password;
        long pagecacheMb = 256;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("missing value for " + name);
                }
                String value = args[++i];
                switch (name) {
                    case "--host" -> o.host = value;
                    case "--port" -> o.port = Integer.parseInt(value);
                    case "--data" -> o.data = Path.of(value).toAbsolutePath();
                    case "--password" -> o.password = value;
                    case "--password-env" -> {
                        o.password = System.getenv(value);
                        if (o.password == null) {
                            throw new IllegalArgumentException("environment variable " + value + " is not set");
                        }
                    }
                    case "--pagecache-mb" -> o.pagecacheMb = Long.parseLong(value);
                    default -> throw new IllegalArgumentException("unknown option " + name);
                }
            }
            if (o.port < 1 || o.port > 65535) {
                throw new IllegalArgumentException("--port is required (1-65535)");
            }
            if (o.data == null) {
                throw new IllegalArgumentException("--data is required");
            }
            if (o.password == null || o.password.length() < 8) {
                throw new IllegalArgumentException("a password of at least 8 characters is required");
            }
            return o;
        }
    }
}
