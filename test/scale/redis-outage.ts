import net from 'node:net';

/**
 * A TCP proxy in front of the shared test Redis, so a test can take Redis
 * away from one instance (and give it back) without stopping the Redis that
 * other tests use: `cut()` drops every connection and refuses new ones,
 * `restore()` lets them through again.
 */
export class RedisOutage {
  private readonly sockets = new Set<net.Socket>();
  private down = false;
  url = '';

  private constructor(
    private readonly server: net.Server,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(redisUrl: string): Promise<RedisOutage> {
    const target = new URL(redisUrl);
    const server = net.createServer();
    const outage = new RedisOutage(server, { host: target.hostname, port: Number(target.port || 6379) });
    server.on('connection', (client) => outage.accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxied = new URL(redisUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String((server.address() as net.AddressInfo).port);
    outage.url = proxied.toString();
    return outage;
  }

  cut() {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore() {
    this.down = false;
  }

  async close() {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket) {
    if (this.down) return void client.destroy();
    const upstream = net.connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
