import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { colorFor, initialsOf } from '../lib/format';
import { Icon } from './icons';

export function Button(props: JSX.ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'secondary' | 'ghost' | 'danger'; icon?: string; busy?: boolean }) {
  const { variant = 'secondary', icon, busy, children, class: className, ...rest } = props;
  return (
    <button {...rest} class={`button button-${variant} ${className ?? ''}`} disabled={Boolean(rest.disabled) || busy}>
      {busy ? <span class="spinner" aria-hidden="true" /> : icon ? <Icon name={icon} /> : null}
      {children && <span>{children}</span>}
    </button>
  );
}

export function IconButton(props: JSX.ButtonHTMLAttributes<HTMLButtonElement> & { icon: string; label: string; active?: boolean }) {
  const { icon, label, active, class: className, ...rest } = props;
  return (
    <button {...rest} type="button" class={`icon-button ${active ? 'is-active' : ''} ${className ?? ''}`} aria-label={label} title={label} aria-pressed={active === undefined ? undefined : active}>
      <Icon name={icon} />
    </button>
  );
}

export function Avatar(props: { id: string; name: string; url?: string | null; size?: number; ring?: boolean; title?: string }) {
  const size = props.size ?? 24;
  const style = { width: `${size}px`, height: `${size}px`, fontSize: `${Math.round(size * 0.42)}px`, background: colorFor(props.id), '--ring': colorFor(props.id) };
  return (
    <span class={`avatar ${props.ring ? 'avatar-ring' : ''}`} style={style} title={props.title ?? props.name} aria-label={props.title ?? props.name}>
      {props.url ? <img src={props.url} alt="" /> : initialsOf(props.name)}
    </span>
  );
}

export function EmptyState(props: { icon: string; title: string; children?: ComponentChildren; action?: ComponentChildren }) {
  return (
    <div class="empty-state">
      <div class="empty-icon">
        <Icon name={props.icon} size={22} />
      </div>
      <h3>{props.title}</h3>
      {props.children && <p>{props.children}</p>}
      {props.action}
    </div>
  );
}

export function Spinner(props: { label?: string }) {
  return (
    <div class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      <span>{props.label ?? 'Loading…'}</span>
    </div>
  );
}

/** A modal dialog: focus goes in, Escape and the backdrop close it. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; footer?: ComponentChildren; wide?: boolean; large?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  // Before the dialog is painted, not after: a key typed the moment it shows belongs in its first field.
  useLayoutEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>('input, select, textarea, button:not(.dialog-close)');
    first?.focus();
    const onKey = (event: KeyboardEvent) => {
      // Only the topmost dialog (a confirmation over another dialog) closes.
      const backdrops = document.querySelectorAll('.backdrop');
      if (backdrops[backdrops.length - 1] !== ref.current?.parentElement) return;
      if (event.key === 'Escape') {
        event.stopPropagation();
        props.onClose();
      }
    };
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('keydown', onKey, true);
      previous?.focus?.();
    };
  }, []);
  return (
    <div class="backdrop" onMouseDown={(event) => event.target === event.currentTarget && props.onClose()}>
      <div class={`dialog ${props.wide ? 'dialog-wide' : ''} ${props.large ? 'dialog-large' : ''}`} role="dialog" aria-modal="true" aria-label={props.title} ref={ref}>
        <header class="dialog-header">
          <h2>{props.title}</h2>
          <button class="icon-button dialog-close" aria-label="Close" onClick={props.onClose}>
            <Icon name="x" />
          </button>
        </header>
        <div class="dialog-body">{props.children}</div>
        {props.footer && <footer class="dialog-footer">{props.footer}</footer>}
      </div>
    </div>
  );
}

export interface MenuItem {
  label: string;
  icon?: string;
  onSelect?: () => void;
  danger?: boolean;
  disabled?: boolean;
  checked?: boolean;
  /** A nested list shown in place of this one. */
  submenu?: MenuItem[];
  separator?: boolean;
  hint?: string;
}

/**
 * A popup menu anchored to an element: arrow keys move, Enter picks,
 * Escape or a click outside closes.
 */
export function Menu(props: { anchor: HTMLElement; items: MenuItem[]; onClose: () => void; align?: 'left' | 'right' }) {
  const ref = useRef<HTMLDivElement>(null);
  const [stack, setStack] = useState<MenuItem[][]>([props.items]);
  const [active, setActive] = useState(0);
  const [position, setPosition] = useState({ top: 0, left: 0 });
  const items = stack[stack.length - 1]!;
  const selectable = items.map((item, i) => (item.separator || item.disabled ? -1 : i)).filter((i) => i >= 0);

  useLayoutEffect(() => {
    const rect = props.anchor.getBoundingClientRect();
    const menu = ref.current!.getBoundingClientRect();
    let left = props.align === 'right' ? rect.right - menu.width : rect.left;
    left = Math.max(8, Math.min(left, window.innerWidth - menu.width - 8));
    let top = rect.bottom + 4;
    if (top + menu.height > window.innerHeight - 8) top = Math.max(8, rect.top - menu.height - 4);
    setPosition({ top, left });
    ref.current!.focus();
  }, [stack]);

  useEffect(() => {
    const onDown = (event: MouseEvent) => {
      if (!ref.current?.contains(event.target as Node) && !props.anchor.contains(event.target as Node)) props.onClose();
    };
    document.addEventListener('mousedown', onDown, true);
    return () => document.removeEventListener('mousedown', onDown, true);
  }, []);

  const pick = (item: MenuItem) => {
    if (item.disabled || item.separator) return;
    if (item.submenu) {
      setStack([...stack, item.submenu]);
      setActive(0);
      return;
    }
    props.onClose();
    item.onSelect?.();
  };

  const onKeyDown = (event: KeyboardEvent) => {
    event.stopPropagation();
    const at = selectable.indexOf(active);
    if (event.key === 'ArrowDown') setActive(selectable[(at + 1) % selectable.length] ?? 0);
    else if (event.key === 'ArrowUp') setActive(selectable[(at - 1 + selectable.length) % selectable.length] ?? 0);
    else if (event.key === 'Enter' || event.key === ' ') pick(items[active]!);
    else if (event.key === 'ArrowLeft' && stack.length > 1) setStack(stack.slice(0, -1));
    else if (event.key === 'Escape' || event.key === 'Tab') {
      props.onClose();
      props.anchor.focus();
    } else return;
    event.preventDefault();
  };

  return (
    <div class="menu" role="menu" tabIndex={-1} ref={ref} style={{ top: `${position.top}px`, left: `${position.left}px` }} onKeyDown={onKeyDown}>
      {stack.length > 1 && (
        <button class="menu-item menu-back" role="menuitem" onClick={() => setStack(stack.slice(0, -1))}>
          <Icon name="arrowLeft" />
          <span>Back</span>
        </button>
      )}
      {items.map((item, i) =>
        item.separator ? (
          <div key={i} class="menu-separator" role="separator" />
        ) : (
          <button
            key={i}
            role={item.checked === undefined ? 'menuitem' : 'menuitemcheckbox'}
            aria-checked={item.checked === undefined ? undefined : item.checked}
            class={`menu-item ${i === active ? 'is-active' : ''} ${item.danger ? 'is-danger' : ''}`}
            disabled={item.disabled}
            onMouseEnter={() => setActive(i)}
            onClick={() => pick(item)}
          >
            {item.checked !== undefined ? <Icon name={item.checked ? 'check' : ''} /> : item.icon ? <Icon name={item.icon} /> : <span class="icon" />}
            <span class="menu-label">{item.label}</span>
            {item.hint && <span class="menu-hint">{item.hint}</span>}
            {item.submenu && <Icon name="chevronRight" />}
          </button>
        ),
      )}
    </div>
  );
}

/** State for a menu opened from a button: `open(event)` anchors it to the clicked element. */
export function useMenu() {
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  return {
    anchor,
    open: (event: { currentTarget: EventTarget | null }) => setAnchor(event.currentTarget as HTMLElement),
    openAt: (element: HTMLElement) => setAnchor(element),
    close: () => setAnchor(null),
  };
}
