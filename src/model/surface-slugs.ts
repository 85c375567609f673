/**
 * A surface's address follows its name (docs/WORKSPACES.md "Surface
 * addresses"): its slug is made from the name, a rename makes a new one, and
 * the slugs it had before still lead to it. These rules are shared by the
 * server, which stores and resolves slugs, and the web app, which resolves
 * an old address in the browser.
 */

/** Slugs are at most 64 characters (the API's `Slug`); a made one leaves room for a `-N` suffix. */
const MADE_SLUG_LENGTH = 60;

/** A kebab-case slug made from a name; `fallback` when nothing of the name is left (a name of only symbols or another script). */
export function slugFromName(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MADE_SLUG_LENGTH)
    .replace(/-+$/g, '');
  return slug || fallback;
}

/** The first of `base`, `base-2`, `base-3`… that `taken` does not hold. */
export function firstFreeSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** What a surface record needs for its address to be resolved. */
export interface SlugHolder {
  slug: string;
  formerSlugs: readonly string[];
}

/** The surface `slug` names among live `surfaces`: the one whose address it is, else the one that had it before a rename. */
export function surfaceBySlug<T extends SlugHolder>(surfaces: readonly T[], slug: string | undefined): T | undefined {
  if (slug === undefined) return undefined;
  return surfaces.find((surface) => surface.slug === slug) ?? surfaces.find((surface) => surface.formerSlugs.includes(slug));
}

/** Every slug the live `surfaces` hold, current and former: none of them may be given to another surface. */
export function slugsHeld(surfaces: readonly SlugHolder[]): Set<string> {
  return new Set(surfaces.flatMap((surface) => [surface.slug, ...surface.formerSlugs]));
}
