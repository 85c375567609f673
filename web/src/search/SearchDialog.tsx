import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf, onThisOrigin } from '../lib/api';
import { navigate } from '../lib/router';
import { Icon } from '../ui/icons';
import { Dialog, Spinner } from '../ui/primitives';
import type { SearchHit, SearchResult } from '../../../src/model/schemas/search';

const GROUPS: Array<{ kind: SearchHit['kind']; label: string; icon: string }> = [
  { kind: 'workspace', label: 'Workspaces', icon: 'table2' },
  { kind: 'row', label: 'Rows', icon: 'table' },
  { kind: 'doc-section', label: 'Doc sections', icon: 'doc' },
];
const LIMIT = 50;
const DEBOUNCE_MS = 150;

/**
 * Search over everything the person can read (workspaces, rows, doc
 * sections), grouped by kind. Arrow keys move through the hits, Enter opens
 * one: the workspace, the row selected in its sheet, or the doc scrolled to
 * the section (the hit's own `url`).
 */
export function SearchDialog(props: { onClose: () => void }) {
  const [query, setQuery] = useState('');
  const [result, setResult] = useState<{ query: string; value: SearchResult } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [active, setActive] = useState(0);
  const latest = useRef('');
  const list = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const q = query.trim();
    latest.current = q;
    if (!q) {
      setResult(null);
      setError(null);
      return;
    }
    const timer = setTimeout(async () => {
      setBusy(true);
      try {
        const value = await api<SearchResult>('GET', `/api/search?${new URLSearchParams({ q, limit: String(LIMIT) })}`);
        // Answers can arrive out of order: only the one for what the box says now is shown.
        if (latest.current !== q) return;
        setResult({ query: q, value });
        setError(null);
        setActive(0);
      } catch (failure) {
        if (latest.current === q) setError(messageOf(failure));
      } finally {
        if (latest.current === q) setBusy(false);
      }
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query]);

  // The hits in the order they are shown (grouped), which is the order the arrow keys walk.
  const ordered = result ? GROUPS.flatMap((group) => result.value.hits.filter((hit) => hit.kind === group.kind)) : [];

  useEffect(() => {
    list.current?.querySelector('.search-hit.is-active')?.scrollIntoView({ block: 'nearest' });
  }, [active]);

  const open = (hit: SearchHit) => {
    props.onClose();
    navigate(onThisOrigin(hit.url));
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (ordered.length) setActive((active + (event.key === 'ArrowDown' ? 1 : -1) + ordered.length) % ordered.length);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      const hit = ordered[active];
      if (hit) open(hit);
    }
  };

  return (
    <Dialog title="Search" onClose={props.onClose} wide>
      <div class="search-field">
        <Icon name="search" />
        <input
          type="search"
          aria-label="Search workspaces, rows and docs"
          placeholder="Search workspaces, rows and docs…"
          value={query}
          maxLength={200}
          onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          onKeyDown={onKeyDown}
          role="combobox"
          aria-expanded={ordered.length > 0}
          aria-controls="search-results"
          aria-activedescendant={ordered[active] ? `hit-${ordered[active]!.id}` : undefined}
        />
        {busy && <span class="spinner" aria-hidden="true" />}
      </div>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <div class="search-results" id="search-results" role="listbox" aria-label="Results" ref={list}>
        {!result && !error && (busy ? <Spinner label="Searching…" /> : <p class="muted search-hint">Type to search everything you can open. Press / anywhere to come back here.</p>)}
        {result && result.value.hits.length === 0 && <p class="muted search-hint">Nothing matches “{result.query}”.</p>}
        {result && result.value.hits.length > 0 && (
          <>
            <p class="search-count muted">
              {result.value.countEstimated ? `More than ${result.value.count.toLocaleString()} results` : result.value.count === 1 ? '1 result' : `${result.value.count.toLocaleString()} results`}
              {result.value.count > result.value.hits.length ? `, the best ${result.value.hits.length} shown` : ''}
            </p>
            {GROUPS.map((group) => {
              const hits = ordered.filter((hit) => hit.kind === group.kind);
              if (hits.length === 0) return null;
              return (
                <section key={group.kind} class="search-group" aria-label={group.label}>
                  <h3 class="nav-heading">{group.label}</h3>
                  {hits.map((hit) => {
                    const index = ordered.indexOf(hit);
                    return (
                      <div
                        key={hit.id}
                        id={`hit-${hit.id}`}
                        role="option"
                        aria-selected={index === active}
                        class={`search-hit ${index === active ? 'is-active' : ''}`}
                        onMouseEnter={() => setActive(index)}
                        onClick={() => open(hit)}
                      >
                        <Icon name={hit.kind === 'workspace' ? (hit.workspace.mode === 'doc' ? 'doc' : 'table2') : group.icon} />
                        <span class="search-hit-text">
                          <span class="search-hit-title">{hit.title ? <Highlighted text={hit.title} query={result.query} /> : <em class="muted">Untitled</em>}</span>
                          {hit.snippet && hit.snippet !== hit.title && (
                            <span class="search-hit-snippet">
                              <Highlighted text={hit.snippet} query={result.query} />
                            </span>
                          )}
                        </span>
                        {hit.kind !== 'workspace' && <span class="search-hit-where">{hit.workspace.name}</span>}
                      </div>
                    );
                  })}
                </section>
              );
            })}
          </>
        )}
      </div>
    </Dialog>
  );
}

/**
 * The text with every occurrence of the query marked. The server matches a
 * case-insensitive substring (docs/SEARCH.md), so the same rule finds what
 * it matched.
 */
export function Highlighted(props: { text: string; query: string }) {
  const needle = props.query.toLowerCase();
  const haystack = props.text.toLowerCase();
  if (!needle || haystack.length !== props.text.length) return <>{props.text}</>;
  const parts = [];
  let from = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    parts.push(<Fragment key={from}>{props.text.slice(from, at)}</Fragment>, <mark key={`m${at}`}>{props.text.slice(at, at + needle.length)}</mark>);
    from = at + needle.length;
  }
  parts.push(<Fragment key="end">{props.text.slice(from)}</Fragment>);
  return <>{parts}</>;
}
