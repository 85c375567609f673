import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { messageOf } from '../lib/api';
import { useNewestRequest } from '../lib/newest-request';
import { timeAgo } from '../lib/format';
import { useStore } from '../lib/store';
import { session } from '../session';
import { confirmDialog } from '../ui/dialogs';
import { Icon } from '../ui/icons';
import { Avatar, Button, EmptyState, IconButton, Spinner } from '../ui/primitives';
import { showError } from '../ui/toast';
import type { CommentFocus, WorkspaceContext } from '../workspace-context/context';
import { useReloadOnEvents } from '../workspace-context/workspace-events';
import { mentionCandidatesOf, mentionQueryAt, rankCandidates, type MentionCandidate } from '../workspace-context/mention-candidates';
import { deleteComment, loadThreads, postComment, sameTarget, setReaction, setResolved, type Comment, type CommentMention, type CommentTarget, type NewTarget, type Thread } from './comments-api';

const QUICK_REACTIONS = ['👍', '🎉', '❤️', '👀', '✅', '😄'];

/**
 * The comments of the open surface: threads (a root and its replies) on its
 * rows, cells and doc ranges, open or resolved, with replies, reactions and
 * resolve. Every `comment.*` event of the workspace reloads the list, so an
 * agent's reply made over REST shows up while the panel is open.
 */
export function CommentsPanel(props: { context: WorkspaceContext; focus: CommentFocus | null; onFocusChange: (focus: CommentFocus | null) => void; highlight?: string }) {
  const { workspace, abilities, surface } = props.context;
  const [status, setStatus] = useState<'open' | 'resolved'>('open');
  const [threads, setThreads] = useState<Thread[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const me = useStore(session);
  const myId = me.status === 'signed-in' ? me.me.principal.id : '';
  const candidates = useMemo(() => mentionCandidatesOf(props.context.members).filter((candidate) => candidate.id !== myId), [props.context.members, myId]);

  // Only the newest listing may show: a reload an event scheduled while the Open tab was shown can answer after the Resolved tab's listing.
  const listingRequest = useNewestRequest();
  const load = useCallback(async () => {
    if (!surface) return;
    const ticket = listingRequest.start();
    try {
      const listed = await loadThreads(workspace, surface.slug, status);
      if (!listingRequest.isNewest(ticket)) return;
      setThreads(listed);
      setError(null);
    } catch (failure) {
      if (listingRequest.isNewest(ticket)) setError(messageOf(failure));
    }
  }, [workspace.id, surface?.slug, status]);

  useEffect(() => {
    setThreads(null);
    void load();
  }, [load]);

  useReloadOnEvents(workspace, (name) => name.startsWith('comment.'), load, { quietMs: 80 });

  /** Runs a write and reloads; false (with the error shown) when the server refused it. */
  const act = async (action: () => Promise<unknown>): Promise<boolean> => {
    try {
      await action();
    } catch (failure) {
      showError(failure);
      return false;
    }
    await load();
    return true;
  };

  // A thread the panel was opened on (from the inbox) is scrolled to once it is listed; not among the open ones, it is looked for among the resolved.
  const lookedInResolved = useRef(false);
  useEffect(() => {
    if (!props.highlight || !threads) return;
    if (!threads.some((thread) => thread.root.id === props.highlight) && status === 'open' && !lookedInResolved.current) {
      lookedInResolved.current = true;
      setStatus('resolved');
      return;
    }
    document.querySelector(`.comments [data-thread="${CSS.escape(props.highlight)}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [props.highlight, threads]);

  if (!surface) return <EmptyState icon="comment" title="No surface open" />;
  const focus = props.focus;
  const shown = threads && focus ? threads.filter((thread) => sameTarget(thread.root.target, focus.target)) : threads;

  return (
    <div class="comments">
      <div class="segmented" role="tablist" aria-label="Threads">
        {(['open', 'resolved'] as const).map((value) => (
          <button key={value} role="tab" aria-selected={status === value} class={status === value ? 'is-selected' : ''} onClick={() => setStatus(value)}>
            {value === 'open' ? 'Open' : 'Resolved'}
          </button>
        ))}
      </div>
      {focus && (
        <div class="comment-focus">
          <div class="comment-focus-label">
            <span class="target-chip">{targetKindLabel(focus.target)}</span>
            <span class="comment-quote">{focus.label}</span>
            <IconButton icon="x" label="Show all comments" onClick={() => props.onFocusChange(null)} />
          </div>
          {abilities.comment && status === 'open' && (
            <Composer
              placeholder="Add a comment…"
              submitLabel="Comment"
              autoFocus
              candidates={candidates}
              onSubmit={(body, mentions) => act(() => postComment(workspace, { target: focus.target, body, mentions }))}
            />
          )}
        </div>
      )}
      {error && <p class="form-error">{error}</p>}
      {!shown && !error && <Spinner />}
      {shown && shown.length === 0 && (
        <EmptyState icon="comment" title={status === 'open' ? 'No open comments' : 'No resolved comments'}>
          {focus
            ? 'Nothing has been said about this yet.'
            : surface.kind === 'doc'
              ? 'Select some text and choose Comment to start a thread.'
              : surface.kind === 'table'
                ? 'Use a row’s menu to comment on the row or the selected cell.'
                : 'Comments on this surface show up here.'}
        </EmptyState>
      )}
      {shown && shown.length > 0 && (
        <ol class="threads">
          {shown.map((thread) => (
            <ThreadView key={thread.root.id} candidates={candidates} highlighted={thread.root.id === props.highlight} thread={thread} myId={myId} canComment={abilities.comment} showTarget={!focus} act={act} context={props.context} />
          ))}
        </ol>
      )}
    </div>
  );
}

function ThreadView(props: { candidates: MentionCandidate[]; highlighted?: boolean; thread: Thread; myId: string; canComment: boolean; showTarget: boolean; act: (action: () => Promise<unknown>) => Promise<boolean>; context: WorkspaceContext }) {
  const { root, replies } = props.thread;
  const { workspace } = props.context;
  const [replying, setReplying] = useState(false);
  const resolved = Boolean(root.resolvedAt);
  return (
    <li class={`thread ${resolved ? 'is-resolved' : ''} ${props.highlighted ? 'is-highlighted' : ''}`} data-thread={root.id}>
      {props.showTarget && (
        <div class="thread-target">
          <span class="target-chip">{targetKindLabel(root.target)}</span>
          <span class="comment-quote">{targetText(root.target)}</span>
        </div>
      )}
      {root.currentText !== undefined && (
        <p class="drift" title={`Commented on “${root.expectedText}”`}>
          The text changed; it now reads “{root.currentText}”.
        </p>
      )}
      {[root, ...replies].map((comment) => (
        <CommentView key={comment.id} comment={comment} myId={props.myId} canComment={props.canComment} act={props.act} workspace={workspace} />
      ))}
      {resolved && root.resolvedBy && (
        <p class="resolved-note">
          <Icon name="check" size={13} /> Resolved by {root.resolvedBy.name} {timeAgo(root.resolvedAt)}
        </p>
      )}
      {props.canComment && (
        <div class="thread-actions">
          {replying ? (
            <Composer
              placeholder="Reply…"
              submitLabel="Reply"
              autoFocus
              onCancel={() => setReplying(false)}
              candidates={props.candidates}
              onSubmit={async (body, mentions) => {
                const posted = await props.act(() => postComment(workspace, { target: root.target, body, parentId: root.id, mentions }));
                if (posted) setReplying(false);
                return posted;
              }}
            />
          ) : (
            <>
              <Button variant="ghost" icon="reply" onClick={() => setReplying(true)}>
                Reply
              </Button>
              <Button variant="ghost" icon={resolved ? 'undo' : 'check'} onClick={() => void props.act(() => setResolved(workspace, root, !resolved))}>
                {resolved ? 'Reopen' : 'Resolve'}
              </Button>
            </>
          )}
        </div>
      )}
    </li>
  );
}

function CommentView(props: { comment: Comment; myId: string; canComment: boolean; act: (action: () => Promise<unknown>) => Promise<boolean>; workspace: WorkspaceContext['workspace'] }) {
  const { comment, workspace } = props;
  const [picking, setPicking] = useState(false);
  const mine = comment.author.id === props.myId;
  const toggle = (emoji: string) => {
    const on = !comment.reactions.find((r) => r.emoji === emoji)?.principalIds.includes(props.myId);
    void props.act(() => setReaction(workspace, comment, emoji, on));
  };
  return (
    <article class="comment" data-comment={comment.id}>
      <header>
        <Avatar id={comment.author.id} name={comment.author.name} url={comment.author.avatarUrl} size={22} />
        <strong>{comment.author.name}</strong>
        {comment.author.principalType === 'agent' && (
          <span class="badge badge-agent">
            <Icon name="agent" size={11} /> agent
          </span>
        )}
        <time dateTime={comment.createdAt} title={new Date(comment.createdAt).toLocaleString()}>
          {timeAgo(comment.createdAt)}
        </time>
        <span class="comment-tools">
          {props.canComment && <IconButton icon="smile" label="Add reaction" active={picking} onClick={() => setPicking(!picking)} />}
          {mine && props.canComment && (
            <IconButton
              icon="trash"
              label="Delete comment"
              onClick={async () => {
                const confirmed = await confirmDialog({
                  title: comment.parentId ? 'Delete reply?' : 'Delete thread?',
                  message: comment.parentId ? 'Your reply is removed for everyone.' : 'Your comment and every reply to it are removed for everyone.',
                  confirmLabel: 'Delete',
                  danger: true,
                });
                if (confirmed) await props.act(() => deleteComment(workspace, comment));
              }}
            />
          )}
        </span>
      </header>
      <p class="comment-body">
        <MentionedText text={comment.body} labels={(comment.mentions ?? []).map((mention) => mention.label)} />
      </p>
      {(comment.reactions.length > 0 || picking) && (
        <div class="reactions">
          {comment.reactions.map((reaction) => (
            <button
              key={reaction.emoji}
              class={`reaction ${reaction.principalIds.includes(props.myId) ? 'is-mine' : ''}`}
              aria-pressed={reaction.principalIds.includes(props.myId)}
              aria-label={`${reaction.emoji} ${reaction.count}`}
              disabled={!props.canComment}
              onClick={() => toggle(reaction.emoji)}
            >
              <span>{reaction.emoji}</span>
              <span class="reaction-count">{reaction.count}</span>
            </button>
          ))}
          {picking && (
            <span class="reaction-choices" role="group" aria-label="Reactions">
              {QUICK_REACTIONS.map((emoji) => (
                <button
                  key={emoji}
                  aria-label={`React ${emoji}`}
                  onClick={() => {
                    setPicking(false);
                    toggle(emoji);
                  }}
                >
                  {emoji}
                </button>
              ))}
            </span>
          )}
        </div>
      )}
    </article>
  );
}

/**
 * A text box that posts with the button or Ctrl+Enter and keeps the text
 * when the server refuses it. Typing `@` lists the workspace's members and
 * agents (arrows, Enter or Tab to pick, Escape to dismiss); a picked name is
 * written as `@Name` and sent in `mentions`, which the server keeps while
 * that text is in the body.
 */
function Composer(props: { placeholder: string; submitLabel: string; candidates: MentionCandidate[]; autoFocus?: boolean; onSubmit: (body: string, mentions: CommentMention[]) => Promise<boolean>; onCancel?: () => void }) {
  const [body, setBody] = useState('');
  const [busy, setBusy] = useState(false);
  const [picked, setPicked] = useState<CommentMention[]>([]);
  const [mention, setMention] = useState<{ start: number; end: number; query: string } | null>(null);
  const [active, setActive] = useState(0);
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (props.autoFocus) field.current?.focus();
  }, []);
  const shown = mention ? rankCandidates(props.candidates, mention.query) : [];

  const submit = async () => {
    if (!body.trim() || busy) return;
    setBusy(true);
    try {
      const text = body.trim();
      const mentions = picked.filter((candidate, i) => text.includes(`@${candidate.label}`) && picked.findIndex((other) => other.id === candidate.id) === i);
      // A refused comment keeps its text, to fix and send again.
      if (await props.onSubmit(text, mentions)) {
        setBody('');
        setPicked([]);
      }
    } finally {
      setBusy(false);
    }
  };

  /** Looks for an `@` being typed before the caret. */
  const track = (element: HTMLTextAreaElement) => {
    const caret = element.selectionStart;
    const query = element.selectionEnd === caret ? mentionQueryAt(element.value.slice(Math.max(0, caret - 48), caret)) : null;
    setMention(query === null ? null : { start: caret - query.length - 1, end: caret, query });
    if (query !== mention?.query) setActive(0);
  };

  const pick = (candidate: MentionCandidate) => {
    if (!mention) return;
    const text = `@${candidate.label} `;
    const next = body.slice(0, mention.start) + text + body.slice(mention.end);
    setBody(next);
    setPicked([...picked, { kind: candidate.kind, id: candidate.id, label: candidate.label }]);
    setMention(null);
    const caret = mention.start + text.length;
    requestAnimationFrame(() => {
      field.current?.focus();
      field.current?.setSelectionRange(caret, caret);
    });
  };

  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <div class="composer-field">
        <textarea
          ref={field}
          rows={2}
          value={body}
          placeholder={props.placeholder}
          aria-label={props.placeholder.replace('…', '')}
          maxLength={20_000}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={shown.length > 0}
          onInput={(e) => {
            setBody((e.target as HTMLTextAreaElement).value);
            track(e.target as HTMLTextAreaElement);
          }}
          onClick={(e) => track(e.target as HTMLTextAreaElement)}
          onBlur={() => setMention(null)}
          onKeyDown={(event) => {
            event.stopPropagation();
            if (mention && shown.length > 0) {
              if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
                event.preventDefault();
                setActive((active + (event.key === 'ArrowDown' ? 1 : -1) + shown.length) % shown.length);
                return;
              }
              if ((event.key === 'Enter' && !event.ctrlKey && !event.metaKey) || event.key === 'Tab') {
                event.preventDefault();
                pick(shown[active] ?? shown[0]!);
                return;
              }
              if (event.key === 'Escape') {
                event.preventDefault();
                setMention(null);
                return;
              }
            }
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void submit();
            } else if (event.key === 'Escape' && props.onCancel) props.onCancel();
          }}
        />
        {mention && (
          <div class="mention-popup composer-mentions" role="listbox" aria-label="Mention someone">
            {shown.length === 0 && <div class="mention-empty">No member or agent matches</div>}
            {shown.map((candidate, i) => (
              <div
                key={candidate.id}
                role="option"
                aria-selected={i === active}
                class={`mention-item ${i === active ? 'is-active' : ''}`}
                onMouseDown={(event) => {
                  event.preventDefault();
                  pick(candidate);
                }}
              >
                <Avatar id={candidate.id} name={candidate.label} size={22} />
                <span class="mention-text">
                  <span class="mention-label">{candidate.label}</span>
                  <span class="mention-detail">{candidate.kind === 'agent' ? 'agent' : (candidate.detail ?? '')}</span>
                </span>
              </div>
            ))}
          </div>
        )}
      </div>
      <div class="composer-actions">
        {props.onCancel && (
          <Button variant="ghost" type="button" onClick={props.onCancel}>
            Cancel
          </Button>
        )}
        <Button variant="primary" type="submit" busy={busy} disabled={!body.trim()}>
          {props.submitLabel}
        </Button>
      </div>
    </form>
  );
}

/** A comment's text with its kept mentions (`@label`) set apart. */
function MentionedText(props: { text: string; labels: string[] }) {
  const tokens = [...new Set(props.labels)].filter(Boolean).map((label) => `@${label}`).sort((a, b) => b.length - a.length);
  if (tokens.length === 0) return <>{props.text}</>;
  const pattern = new RegExp(`(${tokens.map((token) => token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'g');
  return <>{props.text.split(pattern).map((part, i) => (i % 2 === 1 ? <span key={i} class="comment-mention">{part}</span> : part))}</>;
}

function targetKindLabel(target: CommentTarget | NewTarget): string {
  switch (target.type) {
    case 'row':
      return 'Row';
    case 'cell':
      return `Cell · ${target.columnKey}`;
    case 'doc_range':
      return 'Text';
    case 'surface':
      return 'Surface';
    default:
      return target.type.replace('_', ' ');
  }
}

function targetText(target: CommentTarget): string {
  if (target.type === 'doc_range') return `“${target.anchor.text}”`;
  if (target.type === 'html_element') return target.anchor.text ?? target.anchor.selector;
  return '';
}
