import { useEffect, useState } from 'preact/hooks';
import { messageOf, onThisOrigin } from '../lib/api';
import { Button, Dialog, EmptyState, Spinner } from '../ui/primitives';
import type { Workspace } from '../workspace-context/types';
import { formatBytes, previewKindOf, previewText, type FileItem } from './files-api';

/**
 * A file shown in place: images, video and audio inline (`content?inline=1`,
 * which the server sends with a sandboxing CSP), PDFs in a frame, and
 * text-like files as the server's plain-text preview (never rendered).
 */
export function FilePreview(props: { workspace: Workspace; file: FileItem; onClose: () => void; onShare: () => void }) {
  const { file } = props;
  const kind = previewKindOf(file);
  const inline = `${onThisOrigin(file.url)}?inline=1`;
  return (
    <Dialog
      title={file.name}
      wide
      onClose={props.onClose}
      footer={
        <>
          <span class="preview-meta">
            {file.contentType} · {formatBytes(file.size)}
            {file.createdBy ? ` · added by ${file.createdBy.name}` : ''}
          </span>
          <Button icon="link" onClick={props.onShare}>
            Share link
          </Button>
          <a class="button button-primary" href={onThisOrigin(file.url)} download={file.name}>
            Download
          </a>
        </>
      }
    >
      <div class="file-preview" data-kind={kind}>
        {kind === 'image' && <img src={inline} alt={file.name} />}
        {kind === 'video' && <video src={inline} controls />}
        {kind === 'audio' && <audio src={inline} controls />}
        {kind === 'pdf' && <iframe src={inline} title={file.name} />}
        {kind === 'text' && <TextPreview workspace={props.workspace} file={file} />}
      </div>
    </Dialog>
  );
}

function TextPreview(props: { workspace: Workspace; file: FileItem }) {
  const [text, setText] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    previewText(props.workspace, props.file).then(setText, (failure) => setError(messageOf(failure)));
  }, [props.file.id, props.file.version]);
  if (error) return <p class="form-error">{error}</p>;
  if (text === undefined) return <Spinner />;
  if (text === null) {
    return (
      <EmptyState icon="file" title="No preview">
        This type of file cannot be shown here (or it is larger than 256 KB). Download it to open it.
      </EmptyState>
    );
  }
  return <pre class="text-preview">{text}</pre>;
}
