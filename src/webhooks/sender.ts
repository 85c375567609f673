import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { bareHostname, ForbiddenTargetError, pinnedLookup, resolveTarget } from './address-guard';

/**
 * One HTTP attempt of one delivery: Standard Webhooks headers signed with
 * the `standardwebhooks` library, the target's address checked again
 * (SSRF) and connected to as checked, no redirects followed, one timeout
 * over the whole exchange. Never throws: every outcome is an AttemptResult.
 */

export type Attempt = {
  /** Also the `webhook-id` header: the same on every attempt, so receivers can dedupe. */
  deliveryId: string;
  url: string;
  secret: string;
  payload: string;
  timestamp: Date;
};

export type AttemptResult = {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  /** Stopped by shutdown: not the receiver's fault, so not counted as an attempt. */
  aborted?: boolean;
};

export interface Sender {
  send(attempt: Attempt, signal?: AbortSignal): Promise<AttemptResult>;
}

export const USER_AGENT = 'Trellis-Webhooks/1.0';

/** What a receiver may send back that we read (the rest is discarded). */
const MAX_RESPONSE_BYTES = 64 * 1024;

export function signedHeaders(attempt: Pick<Attempt, 'deliveryId' | 'secret' | 'payload' | 'timestamp'>): Record<string, string> {
  return {
    'webhook-id': attempt.deliveryId,
    'webhook-timestamp': String(Math.floor(attempt.timestamp.getTime() / 1000)),
    'webhook-signature': new Webhook(attempt.secret).sign(attempt.deliveryId, attempt.timestamp, attempt.payload),
  };
}

export class HttpSender implements Sender {
  // Keep-alive per process: a busy subscription reuses its connection. Every
  // socket in the pool was opened to an address that passed the check.
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 32, maxFreeSockets: 32 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 32, maxFreeSockets: 32 }),
  };

  constructor(private readonly options: { allowPrivate: boolean; timeoutMs: number }) {}

  async send(attempt: Attempt, signal?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const url = new URL(attempt.url);
      const target = await resolveTarget(url.hostname, { allowPrivate: this.options.allowPrivate });
      const status = await this.post(url, target, attempt, combined);
      const ok = status >= 200 && status < 300;
      return { ok, responseStatus: status, error: ok ? null : describeStatus(status), durationMs: elapsed() };
    } catch (error) {
      if (signal?.aborted) return { ok: false, responseStatus: null, error: 'aborted by shutdown', durationMs: elapsed(), aborted: true };
      if (timeout.aborted) return { ok: false, responseStatus: null, error: `timed out after ${this.options.timeoutMs / 1000} s`, durationMs: elapsed() };
      return { ok: false, responseStatus: null, error: describeError(error), durationMs: elapsed() };
    }
  }

  private post(url: URL, target: { address: string; family: 4 | 6 }, attempt: Attempt, signal: AbortSignal): Promise<number> {
    const body = Buffer.from(attempt.payload, 'utf8');
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(
        {
          protocol: url.protocol,
          hostname: bareHostname(url.hostname),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          agent: this.agents[url.protocol as 'http:' | 'https:'],
          lookup: pinnedLookup(target),
          signal,
          headers: {
            'content-type': 'application/json',
            'content-length': String(body.length),
            'user-agent': USER_AGENT,
            ...signedHeaders(attempt),
          },
        },
        (response) => {
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) response.destroy();
          });
          response.on('close', () => resolve(response.statusCode ?? 0));
          response.on('error', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  close() {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}

function describeStatus(status: number): string {
  if (status >= 300 && status < 400) return `HTTP ${status}: redirects are not followed`;
  return `HTTP ${status}`;
}

/** A short reason safe to show the subscriber (no stack, no internal detail beyond the target's own). */
function describeError(error: unknown): string {
  if (error instanceof ForbiddenTargetError) return error.message;
  if (error instanceof TypeError && /Invalid URL/.test(error.message)) return 'invalid URL';
  const code = (error as NodeJS.ErrnoException)?.code;
  const messages: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    EPIPE: 'connection closed while sending',
    UND_ERR_SOCKET: 'connection closed',
    ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
    DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
    SELF_SIGNED_CERT_IN_CHAIN: 'self-signed TLS certificate in chain',
    CERT_HAS_EXPIRED: 'TLS certificate expired',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate cannot be verified',
    HPE_INVALID_CONSTANT: 'invalid HTTP response',
  };
  if (code && messages[code]) return messages[code];
  return code ? `request failed (${code})` : 'request failed';
}
