import fs from 'node:fs/promises';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import { whenNeeded } from '../lib/when-needed';
import type { Logger } from 'pino';

export type Mail = { to: string; subject: string; text: string; html?: string };

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}

/** Sends through SMTP when `SMTP_URL` is set; otherwise appends to `DATA_DIR/outbox.jsonl`. */
export function createMailer(options: { smtpUrl?: string; from: string; dataDir: string; log: Logger }): Mailer {
  return options.smtpUrl
    ? new SmtpMailer(options.smtpUrl, options.from, options.log)
    : new OutboxMailer(path.join(options.dataDir, 'outbox.jsonl'), options.from, options.log);
}

class SmtpMailer implements Mailer {
  private readonly transport: Transporter;
  constructor(
    url: string,
    private readonly from: string,
    private readonly log: Logger,
  ) {
    this.transport = whenNeeded<typeof import('nodemailer')>('nodemailer').createTransport(url);
  }
  async send(mail: Mail) {
    await this.transport.sendMail({ from: this.from, ...mail });
    // The body carries sign-in links: log who and what, never the content.
    this.log.info({ to: mail.to, subject: mail.subject }, 'mail sent');
  }
  async close() {
    this.transport.close();
  }
}

/**
 * Local development and tests without SMTP: one JSON line per mail, so the
 * newest magic link can be read from the file. The log line omits the body,
 * which holds a credential.
 */
class OutboxMailer implements Mailer {
  private writing: Promise<void> = Promise.resolve();
  constructor(
    readonly file: string,
    private readonly from: string,
    private readonly log: Logger,
  ) {}
  async send(mail: Mail) {
    const line = JSON.stringify({ from: this.from, ...mail, sentAt: new Date().toISOString() }) + '\n';
    this.writing = this.writing.then(async () => {
      await fs.mkdir(path.dirname(this.file), { recursive: true });
      await fs.appendFile(this.file, line, { mode: 0o600 });
    });
    await this.writing;
    this.log.info({ to: mail.to, subject: mail.subject, outbox: this.file }, 'mail written to outbox');
  }
  async close() {
    await this.writing;
  }
}
