// DynamoDB Local listening on one address only (`java DynamoDBLocalOnHost.java <host> <DynamoDBLocal options…>`).
// The jar has no host option and its Jetty server listens on every interface; this starts it the way its own main
// (ServerRunner) does, but sets the address of each of Jetty's connectors before the server binds them.
import java.io.File;
import java.lang.reflect.Field;
import java.util.Arrays;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.CommandLineInput;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.monitoring.Telemetry;
import software.amazon.dynamodb.services.local.monitoring.TelemetryUtil;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DynamoDBLocalOnHost {
  public static void main(String[] argv) throws Exception {
    String host = argv[0];
    String[] args = Arrays.copyOfRange(argv, 1, argv.length);
    CommandLineInput cli = new CommandLineInput(args);
    if (!cli.init()) System.exit(2); // -help, or options it refused (it has printed why)
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    // The Jetty server is a private field of DynamoDBProxyServer: the one thing its API does not expose.
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) {
      if (!(connector instanceof ServerConnector)) throw new IllegalStateException("unexpected connector " + connector);
      ((ServerConnector) connector).setHost(host);
    }
    // As ServerRunner.main does (telemetry stays off with DDB_LOCAL_TELEMETRY=0, which the stack sets).
    Telemetry.configureTelemetry(
        TelemetryUtil.getSetupType(new File("/.dockerenv"), new File("pom.xml")),
        ServerRunner.getSetupMode(cli),
        TelemetryUtil.isTelemetryEnabled(cli.isDisableTelemetry()));
    proxy.start();
    // start() prints a failure to bind and stops the server instead of throwing: exit then, as nothing listens.
    if (!server.isStarted()) System.exit(1);
  }
}
