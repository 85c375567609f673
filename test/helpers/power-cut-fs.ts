import fs from 'node:fs';
import path from 'node:path';
import { PatchedNodeFS, type EmscriptenModule, type EmscriptenNode, type EmscriptenStream } from '../../src/persistence/durable-fs';

/**
 * A file system for PGlite that remembers only what a power cut would leave.
 *
 * PGlite runs over the live directory as usual (NODEFS): every read sees
 * every write. Beside it, a durable image (a directory that starts as a copy
 * of the live one) holds what stable storage would hold:
 * - a write to a file stays pending (offset and bytes, in this process's
 *   memory) until that file is fsynced, then it is copied into the image;
 *   a file grows in the image only by fsynced writes;
 * - creating, renaming and removing a file or directory and truncating a
 *   file reach the image at once (as if the file system journalled its
 *   metadata synchronously: kinder than a real one, never kinder for data).
 *   Truncation drops the pending writes past the new end.
 * - fsync of a directory has nothing left to do.
 *
 * A simulated cut is the process dying (SIGKILL): the pending writes go
 * with it, and a database opened on the image sees what a machine that lost
 * power would. `fsync: 'none'` makes the stream's fsync do nothing, as in
 * PGlite's own NodeFS (the layer the durability fix replaced); `'wal'`
 * flushes the WAL only, to show that checkpoints need the data files flushed.
 */
export class PowerCutFS extends PatchedNodeFS {
  private readonly liveRoot: string;
  private readonly imageRoot: string;

  constructor(
    liveDir: string,
    imageDir: string,
    private readonly options: { fsync: 'all' | 'wal' | 'none' } = { fsync: 'all' },
  ) {
    super(liveDir);
    this.liveRoot = path.resolve(liveDir);
    this.imageRoot = path.resolve(imageDir);
  }

  /** The PGlite instance running over this file system (once it is open). */
  get database() {
    return this.pg;
  }

  protected patch({ NODEFS, FS }: EmscriptenModule): void {
    const pending = new Map<EmscriptenNode, { position: number; bytes: Buffer }[]>();
    const imagePath = (livePath: string) => path.join(this.imageRoot, path.relative(this.liveRoot, livePath));
    const imageOf = (node: EmscriptenNode) => imagePath(NODEFS.realPath(node));
    const forget = (image: string) => {
      for (const node of pending.keys()) if (imageOf(node) === image || imageOf(node).startsWith(image + path.sep)) pending.delete(node);
    };
    const truncated = (node: EmscriptenNode, size: number) => {
      if (!FS.isFile(node.mode)) return;
      fs.truncateSync(imageOf(node), size);
      const writes = pending.get(node);
      if (!writes) return;
      const kept = writes.filter((w) => w.position < size).map((w) => ({ position: w.position, bytes: w.bytes.subarray(0, size - w.position) }));
      pending.set(node, kept);
    };
    const { stream_ops: streamOps, node_ops: nodeOps } = NODEFS;
    const original = { ...streamOps, ...Object.fromEntries(Object.entries(nodeOps).map(([k, v]) => [`node_${k}`, v])) };

    streamOps.write = (stream: EmscriptenStream, buffer: Int8Array, offset: number, length: number, position: number) => {
      const written: number = original.write!(stream, buffer, offset, length, position);
      const bytes = Buffer.from(new Uint8Array(buffer.buffer, buffer.byteOffset + offset, written));
      const writes = pending.get(stream.node) ?? [];
      writes.push({ position, bytes });
      pending.set(stream.node, writes);
      return written;
    };
    streamOps.fsync = (stream: EmscriptenStream) => {
      if (this.options.fsync === 'none' || !FS.isFile(stream.node.mode)) return 0;
      if (this.options.fsync === 'wal' && !NODEFS.realPath(stream.node).includes(`${path.sep}pg_wal${path.sep}`)) return 0;
      const writes = pending.get(stream.node);
      if (!writes?.length) return 0;
      const fd = fs.openSync(imageOf(stream.node), 'r+');
      try {
        for (const { position, bytes } of writes) fs.writeSync(fd, bytes, 0, bytes.length, position);
      } finally {
        fs.closeSync(fd);
      }
      pending.delete(stream.node);
      return 0;
    };
    streamOps.setattr = (stream: EmscriptenStream, attr: { size?: number }) => {
      original.setattr!(stream, attr);
      if (attr.size !== undefined) truncated(stream.node, attr.size);
    };
    nodeOps.setattr = (node: EmscriptenNode, attr: { size?: number }) => {
      original.node_setattr!(node, attr);
      if (attr.size !== undefined) truncated(node, attr.size);
    };
    nodeOps.mknod = (parent: EmscriptenNode, name: string, mode: number, dev: number) => {
      const node: EmscriptenNode = original.node_mknod!(parent, name, mode, dev);
      if (FS.isDir(mode)) fs.mkdirSync(imageOf(node), { recursive: true });
      else fs.writeFileSync(imageOf(node), '');
      return node;
    };
    nodeOps.rename = (node: EmscriptenNode, newDir: EmscriptenNode, newName: string) => {
      const from = imageOf(node);
      const to = path.join(imageOf(newDir), newName);
      original.node_rename!(node, newDir, newName);
      // The entry it replaces is gone, with whatever was pending for it.
      for (const other of pending.keys()) if (other !== node && imageOf(other) === to) pending.delete(other);
      fs.renameSync(from, to);
    };
    nodeOps.unlink = (parent: EmscriptenNode, name: string) => {
      original.node_unlink!(parent, name);
      const target = path.join(imageOf(parent), name);
      forget(target);
      fs.rmSync(target, { force: true });
    };
    nodeOps.rmdir = (parent: EmscriptenNode, name: string) => {
      original.node_rmdir!(parent, name);
      const target = path.join(imageOf(parent), name);
      forget(target);
      fs.rmSync(target, { recursive: true, force: true });
    };
  }
}
