// A small router over the History API: the API serves index.html for every dashboard path.
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

const subscribers = new Set<() => void>();
/** Counts visits (links, back/forward; not the query edits of a page's filters): a visit loads its page afresh. */
let visits = 0;
window.addEventListener('popstate', () => {
  visits++;
  subscribers.forEach((s) => s());
});

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else {
    history.pushState(null, '', to);
    visits++;
  }
  subscribers.forEach((s) => s());
  window.scrollTo(0, 0);
}

const subscribe = (s: () => void) => {
  subscribers.add(s);
  return () => subscribers.delete(s);
};

/** The current path and query (re-rendered on navigation). */
export function useLocation(): { path: string; query: URLSearchParams; visit: number } {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search);
  const visit = useSyncExternalStore(subscribe, () => visits);
  const url = new URL(href, location.origin);
  return { path: url.pathname, query: url.searchParams, visit };
}

/** A link that navigates without a reload (a modified click opens a tab as usual). */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={onClick} {...rest} />;
}
