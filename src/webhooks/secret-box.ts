import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Webhook signing secrets at rest. Signing needs the secret itself (HMAC),
 * so it cannot be stored hashed like API keys; it is encrypted with
 * AES-256-GCM under a key that does not live in the database, so a dump or
 * backup of the database alone yields no usable secret.
 *
 * The key is `WEBHOOK_SECRET_KEY` (32 bytes, base64 or hex) when set: every
 * instance sharing a Postgres database must have the same one. Otherwise a
 * key is generated once into `DATA_DIR/webhook-secret.key` (mode 0600),
 * which suits one instance. Stored form: `v1.<keyId>.<iv>.<ciphertext+tag>`;
 * `keyId` names the key so a mismatch is reported as such.
 */

export class SecretKeyMismatchError extends Error {
  constructor(readonly keyId: string) {
    super(`This webhook secret was encrypted under key ${keyId}, not this instance's WEBHOOK_SECRET_KEY.`);
    this.name = 'SecretKeyMismatchError';
  }
}

const KEY_FILE = 'webhook-secret.key';

export class SecretBox {
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('The webhook secret key must be 32 bytes.');
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 12);
  }

  /** From configuration, else the key file in the data dir (created on first use). */
  static open(options: { configuredKey?: string; dataDir: string }): SecretBox {
    if (options.configuredKey) return new SecretBox(decodeKey(options.configuredKey));
    const file = path.join(options.dataDir, KEY_FILE);
    try {
      return new SecretBox(decodeKey(fs.readFileSync(file, 'utf8').trim()));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    fs.mkdirSync(options.dataDir, { recursive: true });
    const key = randomBytes(32);
    try {
      // `wx`: two processes starting at once keep the first one's key.
      fs.writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      return new SecretBox(key);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return new SecretBox(decodeKey(fs.readFileSync(file, 'utf8').trim()));
    }
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return ['v1', this.keyId, iv.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(stored: string): string {
    const [version, keyId, iv, sealed] = stored.split('.');
    if (version !== 'v1' || !keyId || !iv || !sealed) throw new Error('Unreadable webhook secret.');
    if (keyId !== this.keyId) throw new SecretKeyMismatchError(keyId);
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
  }
}

/** 32 bytes as 64 hex digits or base64 (either alphabet). */
export function decodeKey(text: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
  if (key.length !== 32) throw new Error('The webhook secret key must be 32 bytes (64 hex digits or base64).');
  return key;
}

/** A new signing secret as Standard Webhooks writes it: `whsec_` and 24 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}
