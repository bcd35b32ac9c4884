// What a stream pattern costs RE2 to compile, from its syntax alone: an upper estimate of the
// instructions of the program RE2 builds, counted the way RE2 builds them. Pure and deterministic.
//
// RE2 matches UTF-8 bytes, so a character class becomes one instruction per byte range of each
// UTF-8 sequence it covers (a Unicode class such as \pL covers hundreds); (?i) adds every case
// variant of what a class or literal holds (ſ, K and the Greek symbol forms land in two- and
// three-byte sequences); a counted repetition x{n,m} is compiled as m copies of x. The benchmark
// (bench/pattern-cost.ts) measures compile time against this count to set the cap.

/** Inclusive code point ranges, sorted and disjoint. */
type Ranges = Array<[number, number]>;

const MAX_CP = 0x10ffff;
/** RE2 refuses a counted repetition above this; beyond it the count is only an estimate anyway. */
const MAX_REPEAT = 1000;

// ---- code point sets ----------------------------------------------------------------------

function normalise(rs: Ranges): Ranges {
  const sorted = rs.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Ranges = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function complement(rs: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [a, b] of normalise(rs)) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

/** Number of RE2 byte-range instructions for a set: the UTF-8 byte sequences covering it. */
export function utf8Instructions(rs: Ranges): number {
  let n = 0;
  const stack: Ranges = normalise(rs).map(([a, b]) => [a, b]);
  while (stack.length > 0) {
    let [start, end] = stack.pop()!;
    inner: for (;;) {
      for (const max of [0x7f, 0x7ff, 0xffff]) {
        if (start <= max && max < end) {
          stack.push([max + 1, end]);
          end = max;
          continue inner;
        }
      }
      if (end <= 0x7f) {
        n += 1;
        break;
      }
      for (let i = 1; i < 4; i++) {
        const m = (1 << (6 * i)) - 1;
        if ((start & ~m) !== (end & ~m)) {
          if ((start & m) !== 0) {
            stack.push([(start | m) + 1, end]);
            end = start | m;
            continue inner;
          }
          if ((end & m) !== m) {
            stack.push([end & ~m, end]);
            end = (end & ~m) - 1;
            continue inner;
          }
        }
      }
      n += end <= 0x7ff ? 2 : end <= 0xffff ? 3 : 4;
      break;
    }
  }
  return n;
}

// ---- case folding -------------------------------------------------------------------------

/** Code point → every code point of its case orbit (k, K, U+212A KELVIN SIGN), built once. */
let orbits: Map<number, number[]> | undefined;
let cased: number[] = [];

function caseOrbits(): Map<number, number[]> {
  if (orbits) return orbits;
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    let r = x;
    while (parent.has(r) && parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  const join = (a: number, b: number) => {
    const ra = find(a);
    const rb = find(b);
    if (!parent.has(ra)) parent.set(ra, ra);
    if (!parent.has(rb)) parent.set(rb, rb);
    if (ra !== rb) parent.set(ra, rb);
  };
  for (let cp = 0; cp <= 0x1ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const s = String.fromCodePoint(cp);
    for (const v of [s.toLowerCase(), s.toUpperCase()]) {
      const o = v.codePointAt(0)!;
      if (o !== cp && v.length === String.fromCodePoint(o).length) join(cp, o);
    }
  }
  const groups = new Map<number, number[]>();
  for (const cp of parent.keys()) {
    const r = find(cp);
    const g = groups.get(r) ?? [];
    g.push(cp);
    groups.set(r, g);
  }
  orbits = new Map();
  for (const g of groups.values()) for (const cp of g) orbits.set(cp, g);
  cased = [...orbits.keys()].sort((a, b) => a - b);
  return orbits;
}

/** The set with every case variant of its members added, as RE2 does under (?i). */
function fold(rs: Ranges): Ranges {
  const table = caseOrbits();
  const added: Ranges = [];
  for (const [a, b] of rs) {
    // the first cased code point at or after a, then every one up to b
    let lo = 0;
    let hi = cased.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cased[mid] < a) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < cased.length && cased[k] <= b; k++) for (const o of table.get(cased[k])!) added.push([o, o]);
  }
  return added.length === 0 ? rs : normalise([...rs, ...added]);
}

// ---- Unicode properties ---------------------------------------------------------------------

const GENERAL_CATEGORY = /^(?:[CLMNPSZ]|C[cfnos]|L[lmotu&]|M[cen]|N[dlo]|P[cdefios]|S[ckmo]|Z[lps])$/;
const properties = new Map<string, Ranges>();
let everyCodePoint: string | undefined;

const cpAt = (index: number): number =>
  index < 0xd800 ? index : index < 0x10000 - 0x800 ? index + 0x800 : 0x10000 + ((index - (0x10000 - 0x800)) >> 1);

/**
 * The code points of an RE2 property name (\pL, \p{Greek}, \p{Any}), from the JavaScript engine's
 * Unicode tables (close to RE2's; a name JavaScript does not know counts as every code point).
 */
function property(name: string): Ranges {
  const known = properties.get(name);
  if (known) return known;
  if (name === 'Any') return [[0, MAX_CP]];
  let re: RegExp;
  try {
    re = new RegExp(GENERAL_CATEGORY.test(name) ? `\\p{gc=${name}}+` : `\\p{Script=${name}}+`, 'gu');
  } catch {
    return [[0, MAX_CP]];
  }
  if (!everyCodePoint) {
    const parts: string[] = [];
    for (let cp = 0; cp <= MAX_CP; cp += 0x1000) {
      const chunk: number[] = [];
      for (let c = cp; c < cp + 0x1000 && c <= MAX_CP; c++) if (c < 0xd800 || c > 0xdfff) chunk.push(c);
      parts.push(String.fromCodePoint(...chunk));
    }
    everyCodePoint = parts.join('');
  }
  const out: Ranges = [];
  for (const m of everyCodePoint.matchAll(re)) {
    out.push([cpAt(m.index), cpAt(m.index + m[0].length - 1)]);
  }
  const rs = normalise(out);
  properties.set(name, rs);
  return rs;
}

// ---- the pattern ------------------------------------------------------------------------------

const DIGIT: Ranges = [[0x30, 0x39]];
const SPACE: Ranges = [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]];
const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const POSIX: Record<string, Ranges> = {
  alnum: [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]],
  alpha: [[0x41, 0x5a], [0x61, 0x7a]],
  ascii: [[0, 0x7f]],
  blank: [[0x09, 0x09], [0x20, 0x20]],
  cntrl: [[0, 0x1f], [0x7f, 0x7f]],
  digit: DIGIT,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]],
  space: [[0x09, 0x0d], [0x20, 0x20]],
  upper: [[0x41, 0x5a]],
  word: WORD,
  xdigit: [[0x30, 0x39], [0x41, 0x46], [0x61, 0x66]],
};
const ESCAPED: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };

/** Costs of the classes seen lately: folding a large class is the slow part of costing. */
const classCosts = new Map<string, number>();

interface Flags {
  i: boolean;
  s: boolean;
}

/**
 * The estimated number of RE2 instructions of the pattern compiled as a full match. Never throws,
 * whatever the text (invalid syntax is RE2's to refuse; this only has to terminate and not
 * undercount what RE2 would build for the valid part).
 */
export function patternCost(p: string): number {
  let i = 0;
  const cps = [...p].map((c) => c.codePointAt(0)!);
  const at = (k: number) => (k < cps.length ? String.fromCodePoint(cps[k]) : '');

  /** A class's cost: its byte ranges plus the alternation joining them. */
  const classCost = (rs: Ranges, f: Flags): number => {
    const key = `${f.i ? 'i' : ''}${rs.join(';')}`;
    let cost = classCosts.get(key);
    if (cost === undefined) {
      const set = f.i ? fold(rs) : rs;
      const n = utf8Instructions(set);
      cost = n === 0 ? 1 : n + Math.max(0, normalise(set).length - 1) + 1;
      if (classCosts.size >= 1000) classCosts.clear();
      classCosts.set(key, cost);
    }
    return cost;
  };

  /** \x{...}, \xHH, \123, \n, \. … at i (after the backslash): the code point, or a set. */
  const readEscape = (): { cp?: number; set?: Ranges } => {
    const c = at(i);
    i++;
    if (c === 'x') {
      if (at(i) === '{') {
        const end = cps.indexOf(0x7d, i);
        const hex = end < 0 ? '' : String.fromCodePoint(...cps.slice(i + 1, end));
        i = end < 0 ? cps.length : end + 1;
        const v = parseInt(hex, 16);
        return { cp: Number.isFinite(v) && v <= MAX_CP ? v : 0 };
      }
      const hex = at(i) + at(i + 1);
      i += 2;
      const v = parseInt(hex, 16);
      return { cp: Number.isFinite(v) ? v : 0 };
    }
    if (c === 'p' || c === 'P') {
      let name: string;
      if (at(i) === '{') {
        const end = cps.indexOf(0x7d, i);
        name = end < 0 ? '' : String.fromCodePoint(...cps.slice(i + 1, end));
        i = end < 0 ? cps.length : end + 1;
      } else {
        name = at(i);
        i++;
      }
      let negated = c === 'P';
      if (name.startsWith('^')) {
        negated = !negated;
        name = name.slice(1);
      }
      const rs = property(name.slice(0, 64));
      return { set: negated ? complement(rs) : rs };
    }
    if (c === 'd' || c === 'D') return { set: c === 'd' ? DIGIT : complement(DIGIT) };
    if (c === 's' || c === 'S') return { set: c === 's' ? SPACE : complement(SPACE) };
    if (c === 'w' || c === 'W') return { set: c === 'w' ? WORD : complement(WORD) };
    if (c >= '0' && c <= '7') {
      let oct = c;
      while (oct.length < 3 && at(i) >= '0' && at(i) <= '7') oct += at(i++);
      return { cp: parseInt(oct, 8) };
    }
    if (c in ESCAPED) return { cp: ESCAPED[c] };
    return { cp: c === '' ? 0 : c.codePointAt(0)! };
  };

  /** [...] at i (on the '['): its set. */
  const bracket = (): Ranges => {
    i++;
    let negated = false;
    if (at(i) === '^') {
      negated = true;
      i++;
    }
    const rs: Ranges = [];
    let first = true;
    while (i < cps.length && (at(i) !== ']' || first)) {
      first = false;
      let lo: number | undefined;
      if (at(i) === '[' && at(i + 1) === ':') {
        const rest = String.fromCodePoint(...cps.slice(i + 2, i + 20));
        const m = /^(\^?)([a-z]+):\]/.exec(rest);
        if (m) {
          const set = POSIX[m[2]] ?? [[0, 0x7f]];
          rs.push(...(m[1] ? complement(set) : set));
          i += 2 + m[0].length;
          continue;
        }
      }
      if (at(i) === '\\') {
        i++;
        const e = readEscape();
        if (e.set) {
          rs.push(...e.set);
          continue;
        }
        lo = e.cp!;
      } else {
        lo = cps[i++];
      }
      if (at(i) === '-' && at(i + 1) !== ']' && i + 1 < cps.length) {
        i++;
        let hi: number;
        if (at(i) === '\\') {
          i++;
          hi = readEscape().cp ?? lo;
        } else hi = cps[i++];
        rs.push([Math.min(lo, hi), Math.max(lo, hi)]);
      } else rs.push([lo, lo]);
    }
    i++; // ']'
    const set = normalise(rs);
    return negated ? complement(set) : set;
  };

  const literal = (cp: number, f: Flags): number => (f.i && caseOrbits().has(cp) ? classCost([[cp, cp]], f) : utf8Instructions([[cp, cp]]));

  /** Parses an alternation until ')' or the end; returns its cost. */
  const alternation = (outer: Flags): number => {
    const f = { ...outer };
    const branches: number[] = [];
    let total = 0;
    let last = 0;
    const atom = (c: number) => {
      total += c;
      last = c;
    };
    while (i < cps.length && at(i) !== ')') {
      const c = at(i);
      if (c === '|') {
        branches.push(total);
        total = 0;
        last = 0;
        i++;
      } else if (c === '(') {
        i++;
        const inner = { ...f };
        if (at(i) === '?') {
          i++;
          if (at(i) === 'P' || at(i) === '<') {
            while (i < cps.length && at(i) !== '>') i++;
            i++;
          } else {
            let on = true;
            while (i < cps.length && at(i) !== ':' && at(i) !== ')') {
              if (at(i) === '-') on = false;
              else if (at(i) === 'i') inner.i = on;
              else if (at(i) === 's') inner.s = on;
              i++;
            }
            if (at(i) === ')') {
              // (?i) alone: the flags hold for the rest of the enclosing group
              i++;
              f.i = inner.i;
              f.s = inner.s;
              continue;
            }
            i++;
          }
        }
        const c2 = alternation(inner) + 1;
        i++; // ')'
        atom(c2);
      } else if (c === '[') {
        atom(classCost(bracket(), f));
      } else if (c === '\\') {
        i++;
        if (at(i) === 'Q') {
          i++;
          while (i < cps.length && !(at(i) === '\\' && at(i + 1) === 'E')) atom(literal(cps[i++], f));
          i += 2;
          continue;
        }
        if ('bBAz'.includes(at(i)) && at(i) !== '') {
          i++;
          atom(1);
          continue;
        }
        if (at(i) === 'C') {
          i++;
          atom(1);
          continue;
        }
        const e = readEscape();
        atom(e.set ? classCost(e.set, f) : literal(e.cp!, f));
      } else if (c === '.') {
        i++;
        atom(classCost(f.s ? [[0, MAX_CP]] : complement([[0x0a, 0x0a]]), f));
      } else if (c === '*' || c === '+' || c === '?') {
        i++;
        if (at(i) === '?') i++;
        total += 1;
        last += 1;
      } else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(String.fromCodePoint(...cps.slice(i, i + 16)));
        if (!m) {
          i++;
          atom(1);
          continue;
        }
        i += m[0].length;
        if (at(i) === '?') i++;
        const min = Math.min(Number(m[1]), MAX_REPEAT);
        const max = m[2] === undefined ? min : m[3] === '' ? min + 1 : Math.min(Number(m[3]), MAX_REPEAT);
        const copies = Math.max(min, max, 1);
        const repeated = last * copies + copies;
        total += repeated - last;
        last = repeated;
      } else if (c === '^' || c === '$') {
        i++;
        atom(1);
      } else {
        i++;
        atom(literal(cps[i - 1], f));
      }
    }
    branches.push(total);
    return branches.reduce((a, b) => a + b, 0) + branches.length - 1;
  };

  let cost = 0;
  // A stray ')' ends a group that was never opened: RE2 refuses the pattern; keep counting.
  while (i < cps.length) {
    cost += alternation({ i: false, s: false });
    i++;
  }
  return cost;
}

/**
 * The most a stream pattern may cost (instructions of patternCost). Calibrated with
 * bench/pattern-cost.ts so that the costliest accepted pattern, and so a token's 100 patterns,
 * compile quickly enough to stay off the decisions' way (the figures: docs/api.md#pattern-cost).
 */
export const MAX_PATTERN_COST = 2000;
