import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * A panel anchored below a button (a filter builder, a field list): unlike
 * `Menu` it holds form controls, so focus moves inside it freely; Escape or
 * a click outside closes it.
 */
export function Popover(props: { anchor: HTMLElement; onClose: () => void; label: string; children: ComponentChildren; class?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [position, setPosition] = useState({ top: 0, left: 0 });

  useLayoutEffect(() => {
    const rect = props.anchor.getBoundingClientRect();
    const panel = ref.current!.getBoundingClientRect();
    const left = Math.max(8, Math.min(rect.left, window.innerWidth - panel.width - 8));
    const top = rect.bottom + 6;
    // Re-measured after every render (the panel grows as conditions are added); set only on a change, or it loops.
    if (top !== position.top || left !== position.left) setPosition({ top, left });
  });

  useEffect(() => {
    const onDown = (event: MouseEvent) => {
      const target = event.target as Node;
      // A menu or dialog opened from inside the popover is drawn outside it.
      if (target instanceof Element && target.closest('.menu, .backdrop')) return;
      if (!ref.current?.contains(target) && !props.anchor.contains(target)) props.onClose();
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      event.stopPropagation();
      props.onClose();
      props.anchor.focus();
    };
    document.addEventListener('mousedown', onDown, true);
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('mousedown', onDown, true);
      document.removeEventListener('keydown', onKey, true);
    };
  }, [props.anchor]);

  return (
    <div class={`popover ${props.class ?? ''}`} role="dialog" aria-label={props.label} ref={ref} style={{ top: `${position.top}px`, left: `${position.left}px` }}>
      {props.children}
    </div>
  );
}
