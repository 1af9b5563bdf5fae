package org.apache.hadoop.io;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.conf.Configuration;

/**
 * The mini-YARN harness's own stand-in for Hadoop's class of this name, first on the harness's
 * class path. It has the same public methods; it opens files without the owner check.
 *
 * <p>Why: under Kerberos, Hadoop's implementation checks that a container's log file belongs to
 * the application's user, with {@code fstat} from the native library libhadoop, and refuses to
 * work at all without it ("Secure IO is not possible without native code extensions"). libhadoop
 * is not on Maven Central, and the harness runs containers with DefaultContainerExecutor, as the
 * NodeManagers' own operating-system user, so the owner could never be the application's user
 * anyway (on a real secure cluster LinuxContainerExecutor makes it so). Without this class the
 * secure mini-YARN's NodeManagers could neither aggregate nor serve container logs. Without
 * Kerberos Hadoop's own class opens files the same way as this one.
 */
public class SecureIOUtils {
  /** Not instantiated. */
  public SecureIOUtils() {
  }

  /**
   * Opens a file for random reads.
   *
   * @param f the file
   * @param mode RandomAccessFile's mode
   * @param expectedOwner not checked (see the class comment)
   * @param expectedGroup not checked
   * @return the open file
   * @throws IOException when it cannot be opened
   */
  public static RandomAccessFile openForRandomRead(File f, String mode, String expectedOwner,
      String expectedGroup) throws IOException {
    return new RandomAccessFile(f, mode);
  }

  /**
   * Opens a local file as an FSDataInputStream.
   *
   * @param f the file
   * @param expectedOwner not checked (see the class comment)
   * @param expectedGroup not checked
   * @return the stream
   * @throws IOException when it cannot be opened
   */
  public static FSDataInputStream openFSDataInputStream(File f, String expectedOwner,
      String expectedGroup) throws IOException {
    return FileSystem.getLocal(new Configuration()).getRaw().open(new Path(f.getAbsolutePath()));
  }

  /**
   * Opens a file for reading.
   *
   * @param f the file
   * @param expectedOwner not checked (see the class comment)
   * @param expectedGroup not checked
   * @return the stream
   * @throws IOException when it cannot be opened
   */
  public static FileInputStream openForRead(File f, String expectedOwner, String expectedGroup)
      throws IOException {
    return new FileInputStream(f);
  }

  /**
   * Creates a new file for writing with the given permissions; fails when it exists.
   *
   * @param f the file
   * @param permissions POSIX permission bits, e.g. 0640
   * @return the stream
   * @throws IOException AlreadyExistsException when the file exists
   */
  public static FileOutputStream createForWrite(File f, int permissions) throws IOException {
    try {
      Files.createFile(f.toPath());
    } catch (FileAlreadyExistsException e) {
      throw new AlreadyExistsException(e);
    }
    Set<PosixFilePermission> p = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] bits = {PosixFilePermission.OTHERS_EXECUTE,
        PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
        PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE,
        PosixFilePermission.GROUP_READ, PosixFilePermission.OWNER_EXECUTE,
        PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
    for (int i = 0; i < bits.length; i++) {
      if ((permissions & (1 << i)) != 0) {
        p.add(bits[i]);
      }
    }
    Files.setPosixFilePermissions(f.toPath(), p);
    return new FileOutputStream(f);
  }

  /** The file to create exists already. */
  public static class AlreadyExistsException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * @param msg what exists
     */
    public AlreadyExistsException(String msg) {
      super(msg);
    }

    /**
     * @param cause why
     */
    public AlreadyExistsException(Throwable cause) {
      super(cause);
    }
  }
}
