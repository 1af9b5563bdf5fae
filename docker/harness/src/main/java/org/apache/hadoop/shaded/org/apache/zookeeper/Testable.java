package org.apache.hadoop.shaded.org.apache.zookeeper;

/**
 * The mini-YARN harness's stand-in for ZooKeeper's {@code Testable} interface, which Hadoop 3.5.0's
 * hadoop-client-minicluster leaves out of its relocated ZooKeeper (its shading drops it, though
 * the relocated {@code ZooKeeper} client class refers to it: {@code getTestable()}). Without it the
 * JVM cannot load that client class, and no ZooKeeper client of the ResourceManager (the embedded
 * leader elector, ZKRMStateStore through Curator) can start: NoClassDefFoundError. The harness
 * never calls these methods; they are here so that the class resolves, with the signatures of
 * ZooKeeper 3.8's interface, which {@code ZooKeeperTestable} implements. Compiled for Hadoop 3.5+
 * only (harness/pom.xml).
 */
public interface Testable {
  /** Makes the ZooKeeper client behave as if its session had expired. */
  void injectSessionExpiration();

  /**
   * Puts an event into the client's event queue.
   *
   * @param event the event
   */
  default void queueEvent(WatchedEvent event) {
    throw new UnsupportedOperationException("queueEvent");
  }

  /**
   * Closes the client's socket.
   *
   * @throws java.io.IOException never here
   */
  default void closeSocket() throws java.io.IOException {
    throw new UnsupportedOperationException("closeSocket");
  }
}
