import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Button, Dialog } from './primitives';
import { showToast } from './toast';

/** A secret the server shows once (an API key, a webhook's signing secret): it exists only in this dialog. */
export function SecretDialog(props: { title: string; intro: ComponentChildren; secret: string; testId: string; children?: ComponentChildren; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <Dialog
      title={props.title}
      onClose={props.onClose}
      footer={
        <Button variant="primary" onClick={props.onClose}>
          I have stored it
        </Button>
      }
    >
      <p class="muted">{props.intro}</p>
      <div class="secret-box">
        <code data-testid={props.testId}>{props.secret}</code>
        <Button
          icon={copied ? 'check' : 'copy'}
          onClick={() =>
            navigator.clipboard.writeText(props.secret).then(
              () => setCopied(true),
              () => showToast('Select the secret and copy it by hand.'),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </Button>
      </div>
      {props.children}
    </Dialog>
  );
}
