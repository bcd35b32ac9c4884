// Paths as proxies and media servers read them: whether an original request path names exactly
// the file a proxy will serve, and whether a name is an exact MediaMTX path (never a pattern).

/**
 * Characters a request path may carry unencoded: RFC 3986 pchar and '/', less ';' (servlet
 * containers and some proxies cut a segment at ';' before serving it).
 */
const RAW_PATH = /^[A-Za-z0-9\-._~!$&'()*+,=:@/%]*$/;
const PERCENT_TRIPLET = /%(?![0-9A-Fa-f]{2})/;
/** %25 (an encoded '%': a second decoding pass changes the path), %2F and %5C (encoded separators). */
const ENCODED_META = /%(?:25|2f|5c)/i;
/** Characters no segment may hold once decoded. */
const SEGMENT_META = /[/\\?#;%\p{Cc}]/u;
/** '.', '..', '...', '. .': dot segments, also as Windows (which drops trailing dots and spaces) reads them. */
const DOTS_ONLY = /^[.\s]*\.[.\s]*$/u;
/** ASCII is left as it is by NFKC: the common case skips the normalisation. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range, control characters included
const ASCII = /^[\x00-\x7f]*$/;
/** Windows serves `premium.` and `premium ` as `premium`. */
const TRAILING_DOT_OR_SPACE = /[.\s]$/u;

export type SafePath = { path: string } | { problem: string };

/**
 * Decodes the path part of an original request URI (no query) when every proxy serves it as
 * itself, else says why it might not. A proxy may decode %2F before resolving dot segments
 * (nginx), forward the path untouched (Envoy's default), cut segments at ';' (servlet
 * containers), fold full-width characters (NFKC, best-fit) or drop trailing dots (Windows): a path whose
 * meaning depends on which of these happens is refused, never resolved.
 */
export function safeRequestPath(raw: string): SafePath {
  if (!raw.startsWith('/')) return { problem: 'not an origin-form path (does not start with /)' };
  if (!RAW_PATH.test(raw)) return { problem: 'a character that must be percent-encoded, or ;' };
  if (PERCENT_TRIPLET.test(raw)) return { problem: 'a % that does not start a percent-encoded byte' };
  if (ENCODED_META.test(raw)) return { problem: 'an encoded %, / or \\' };
  const segments = raw.slice(1).split('/');
  const decoded: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const last = i === segments.length - 1;
    if (segments[i] === '') {
      if (last) {
        decoded.push('');
        continue;
      }
      return { problem: 'an empty segment (//)' };
    }
    let seg: string;
    try {
      seg = decodeURIComponent(segments[i]);
    } catch {
      return { problem: 'percent-encoding that is not UTF-8' };
    }
    if (DOTS_ONLY.test(seg)) return { problem: 'a dot segment' };
    if (SEGMENT_META.test(seg)) return { problem: 'an encoded separator, ?, #, ;, % or control character' };
    if (TRAILING_DOT_OR_SPACE.test(seg)) return { problem: 'a segment ending in a dot or a space' };
    // Full-width '．．', '／' or 'ｐremium' become '..', '/' or 'premium' wherever text is folded
    // (NFKC, Windows best-fit code pages): only a segment folding leaves as it is names one file.
    if (!ASCII.test(seg) && seg.normalize('NFKC') !== seg) return { problem: 'a segment that Unicode compatibility folding (NFKC) changes' };
    decoded.push(seg);
  }
  return { path: `/${decoded.join('/')}` };
}

/**
 * The path names MediaMTX itself accepts (its releases since March 2026 refuse '~', ':' and dot
 * segments); every permission path must be one.
 */
const MEDIAMTX_PATH = /^[A-Za-z0-9_.\-/]+$/;

/**
 * Why MediaMTX could read `path` as something other than exactly this one path, or null. In a
 * permission, MediaMTX compiles a path starting with '~' as an unanchored regular expression and
 * takes an empty path as every path; a path it would never serve grants nothing useful.
 */
export function mediamtxPathProblem(path: string): string | null {
  if (path === '') return 'an empty MediaMTX path means every path';
  if (path.startsWith('~')) return "a name starting with '~' is read by MediaMTX as a regular expression";
  if (!MEDIAMTX_PATH.test(path)) return 'MediaMTX paths hold only letters, digits, _ . - and /';
  if (path.startsWith('/') || path.endsWith('/')) return 'a MediaMTX path neither starts nor ends with /';
  for (const seg of path.split('/')) {
    if (seg === '') return 'a MediaMTX path has no empty segment (//)';
    if (seg === '.' || seg === '..') return 'a MediaMTX path has no . or .. segment';
  }
  return null;
}
