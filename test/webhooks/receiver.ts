import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as a webhook receiver saw it. */
export type Received = { path: string; headers: Record<string, string>; body: string; json: any };

/** How the receiver answers: a status, or `hang` (never answer, until closed). */
export type Answer = number | 'hang';

/**
 * A real webhook receiver on loopback for tests: records every request and
 * answers as told (200 unless `answer` says otherwise).
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (request: Received) => Answer = () => 200;
  private readonly server: http.Server;
  private readonly hanging = new Set<http.ServerResponse>();
  url = '';

  private constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        let json: unknown = undefined;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const request: Received = { path: req.url ?? '/', headers, body, json };
        this.received.push(request);
        const answer = this.answer(request);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        const redirect = answer >= 300 && answer < 400 ? { location: `${this.url}/landing` } : {};
        res.writeHead(answer, { 'content-type': 'text/plain', ...redirect }).end(answer < 300 ? 'ok' : 'nope');
      });
    });
  }

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  /** Requests carrying this event name. */
  ofEvent(event: string): Received[] {
    return this.received.filter((r) => r.json?.event === event);
  }

  async close() {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A subscription written straight to the database, as another instance (or
 * an earlier DNS answer) would have left it: the app under test is not told.
 */
export async function insertWebhookBehindTheApp(
  t: { services: import('../../src/domain/services').Services },
  owner: { orgId: string; userId: string },
  values: { url: string; events: string[]; catchupAfterSeq?: number },
): Promise<string> {
  const { newId } = await import('../../src/lib/ids');
  const { newSigningSecret } = await import('../../src/webhooks/secret-box');
  const id = newId('whk');
  const now = t.services.clock.now();
  await t.services.db
    .insertInto('webhooks')
    .values({
      id,
      orgId: owner.orgId,
      workspaceId: null,
      url: values.url,
      events: values.events,
      secretCiphertext: t.services.webhooks.secrets.seal(newSigningSecret()),
      createdById: owner.userId,
      createdAt: now,
      updatedAt: now,
      catchupAfterSeq: values.catchupAfterSeq ?? null,
    })
    .execute();
  return id;
}
