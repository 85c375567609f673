import { useState } from 'preact/hooks';
import { api, onThisOrigin } from '../lib/api';
import { FormDialog } from '../ui/FormDialog';
import { Button, Dialog } from '../ui/primitives';
import type { Ticket, TicketKind } from '../../../src/model/schemas/support';

const KINDS: Array<{ value: TicketKind; label: string }> = [
  { value: 'question', label: 'A question' },
  { value: 'bug', label: 'Something is broken' },
  { value: 'feature', label: 'An idea or a request' },
  { value: 'billing', label: 'Billing' },
  { value: 'other', label: 'Something else' },
];

/**
 * "Help": a support ticket (`POST /api/support`, docs/BILLING.md "Support"),
 * sent with where the person was in the app, and answered with the ticket's
 * id to quote.
 */
export function SupportDialog(props: { onClose: () => void }) {
  const [kind, setKind] = useState<TicketKind>('question');
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const [ticket, setTicket] = useState<Ticket | null>(null);

  const submit = async () => {
    const context = { page: window.location.pathname, userAgent: navigator.userAgent, viewport: `${window.innerWidth}x${window.innerHeight}` };
    setTicket(await api<Ticket>('POST', '/api/support', { kind, title: title.trim(), body: body.trim(), context }));
  };

  if (ticket) {
    return (
      <Dialog
        title="Request received"
        onClose={props.onClose}
        footer={
          <Button variant="primary" onClick={props.onClose}>
            Done
          </Button>
        }
      >
        <p>Thank you. We will answer by e-mail; quote this reference if you write again.</p>
        <div class="secret-box">
          <code data-testid="ticket-id">{ticket.id}</code>
        </div>
        {ticket.trackerNumber !== null && ticket.trackerUrl && (
          <p class="fine-print">
            Tracked as{' '}
            <a href={onThisOrigin(ticket.trackerUrl)} target="_blank" rel="noopener">
              issue #{ticket.trackerNumber}
            </a>
            .
          </p>
        )}
      </Dialog>
    );
  }

  return (
    <FormDialog title="Help and support" id="support-ticket" submitLabel="Send" disabled={!title.trim() || !body.trim()} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>What is it about?</span>
        <select name="kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as TicketKind)}>
          {KINDS.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </label>
      <label class="field">
        <span>Subject</span>
        <input name="title" required maxLength={200} value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        <span>Details</span>
        <textarea name="body" required rows={6} maxLength={20_000} value={body} onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)} />
        <small>The page you are on and your browser are sent along, to help us reproduce what you saw.</small>
      </label>
    </FormDialog>
  );
}
