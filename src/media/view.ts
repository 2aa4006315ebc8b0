import type { MediaRow } from '../db/schema.js';

/** Storage key of one stored file of an image: `<site_id>/media/<id>/<file>`. */
export const mediaKey = (siteId: string, mediaId: string, file: string) => `${siteId}/media/${mediaId}/${file}`;

/** Where a stored file of an image is, under a site's base path or URL: `/media/<id>/<file>`. */
export const mediaPath = (mediaId: string, file: string) => `/media/${mediaId}/${file}`;

/** The images of a media path in a post's Markdown (`.../media/<id>/<file>`, on any of the site's addresses). */
export const MEDIA_URL_PATTERN = /\/media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/[a-z0-9-]+\.[a-z]+$/;

/** Ids of the site's images a post's Markdown shows (its image links to media paths). */
export function mediaIdsIn(markdown: string): string[] {
  const ids = new Set<string>();
  for (const match of markdown.matchAll(/\/media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\//g)) ids.add(match[1]!);
  return [...ids];
}

/** An image as the API shows it; URLs are absolute, under the site's address. */
export function mediaResource(row: MediaRow, baseUrl: string) {
  const url = (file: string) => `${baseUrl}${mediaPath(row.id, file)}`;
  return {
    id: row.id,
    url: url(row.file),
    name: row.name,
    format: row.format,
    width: row.width,
    height: row.height,
    alt: row.alt,
    sizeBytes: row.sizeBytes,
    variants: row.variants.map((variant) => ({ url: url(variant.file), format: variant.format, width: variant.width, height: variant.height, sizeBytes: variant.sizeBytes })),
    createdAt: row.createdAt,
  };
}
