/** `data:` URLs as OpenAI clients send them for inline images, audio and files. */

export interface InlineData {
  mediaType: string
  /** Base64, as it appeared in the URL. */
  base64: string
}

const DATA_URL = /^data:([^;,]+)?((?:;[^;,]+)*?);base64,(.*)$/s

/** The media type and base64 payload of a `data:` URL, or null when it is not a base64 data URL. */
export function parseDataUrl(url: string): InlineData | null {
  const match = DATA_URL.exec(url)
  if (!match) return null
  return { mediaType: match[1] ?? 'application/octet-stream', base64: match[3] ?? '' }
}

const mediaTypeByExtension: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
}

/** Best guess of a remote file's media type from its path, for APIs that want one next to a URL. */
export function mediaTypeFromUrl(url: string): string | null {
  const path = url.split(/[?#]/, 1)[0] ?? ''
  const dot = path.lastIndexOf('.')
  if (dot === -1 || dot < path.lastIndexOf('/')) return null
  return mediaTypeByExtension[path.slice(dot + 1).toLowerCase()] ?? null
}
