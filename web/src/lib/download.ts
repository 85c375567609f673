/** Saves what `url` answers as a file, as a link with `download` does: the browser streams it to disk, the page holds none of it. */
export function downloadFrom(url: string, filename: string) {
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
}
