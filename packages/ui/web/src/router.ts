/**
 * Hash routing: `#/`, `#/sandboxes`, `#/sandboxes/<id>`, `#/templates`,
 * `#/nodes`. The server serves one shell at `/ui/`; pages change without
 * reloads.
 *
 * @module
 */
import { useEffect, useState } from 'react';

/** The current route's path segments. */
export function useRoute(): string[] {
  const read = (): string[] =>
    window.location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = (): void => setRoute(read());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** A link target for a route. */
export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

/** Goes to a route. */
export function navigate(...segments: string[]): void {
  window.location.hash = href(...segments);
}
