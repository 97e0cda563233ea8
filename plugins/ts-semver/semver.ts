// Semantic versions (https://semver.org, 2.0.0): parsing, precedence and
// bumping, apart from the plugin contract (plugin.ts), so that
// semver.test.ts runs it on Node. Every problem with the caller's input is a
// SemverError whose message says what is wrong and how to write it instead:
// plugin.ts returns it as a tool execution error, which the model reads.

/** A problem with the caller's input, told to the model. */
export class SemverError extends Error {}

/** A prerelease identifier: a number (compared numerically) or a word. */
export type Identifier = number | string;

export interface Version {
  major: number;
  minor: number;
  patch: number;
  /** `rc.1` is `['rc', 1]`; empty for a release. */
  prerelease: Identifier[];
  /** Build metadata (`+build.5`): kept, ignored by precedence. */
  build: string[];
}

/** What `bump` can increment. */
export const PARTS = ['major', 'minor', 'patch', 'prerelease'] as const;
export type Part = (typeof PARTS)[number];

const NUMBER = /^(0|[1-9][0-9]*)$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;

/** `version` parsed, or a SemverError naming `field` and what is wrong. */
export function parse(version: string, field = 'version'): Version {
  const bad = (why: string) => new SemverError(`\`${field}\` ${JSON.stringify(version)} is not a semantic version: ${why}`);
  if (/^[vV=]/.test(version)) {
    throw bad(`drop the leading ${JSON.stringify(version[0])}: write ${JSON.stringify(version.slice(1))}`);
  }
  const plus = version.indexOf('+');
  const core = plus < 0 ? version : version.slice(0, plus);
  const build = plus < 0 ? [] : version.slice(plus + 1).split('.');
  const dash = core.indexOf('-');
  const numbers = (dash < 0 ? core : core.slice(0, dash)).split('.');
  const prerelease = dash < 0 ? [] : core.slice(dash + 1).split('.');

  if (numbers.length !== 3) {
    throw bad(`expected MAJOR.MINOR.PATCH, such as 1.4.2, but it has ${numbers.length} part(s)`);
  }
  const [major, minor, patch] = numbers.map((text, i) => {
    const name = ['MAJOR', 'MINOR', 'PATCH'][i];
    if (!NUMBER.test(text)) {
      throw bad(
        /^0[0-9]+$/.test(text)
          ? `${name} ${JSON.stringify(text)} has a leading zero`
          : `${name} ${JSON.stringify(text)} is not a non-negative integer`,
      );
    }
    const value = Number(text);
    if (!Number.isSafeInteger(value)) throw bad(`${name} ${text} is larger than ${Number.MAX_SAFE_INTEGER}`);
    return value;
  });
  const checked = (ids: string[], what: string) => {
    for (const id of ids) {
      if (id === '') throw bad(`the ${what} has an empty identifier (two dots, or a dot at an end)`);
      if (!IDENTIFIER.test(id)) throw bad(`the ${what} identifier ${JSON.stringify(id)} may hold only 0-9, A-Z, a-z and -`);
    }
    return ids;
  };
  return {
    major,
    minor,
    patch,
    prerelease: checked(prerelease, 'prerelease').map((id) => {
      if (!/^[0-9]+$/.test(id)) return id;
      if (!NUMBER.test(id)) throw bad(`the prerelease identifier ${JSON.stringify(id)} has a leading zero`);
      const value = Number(id);
      if (!Number.isSafeInteger(value)) throw bad(`the prerelease identifier ${id} is larger than ${Number.MAX_SAFE_INTEGER}`);
      return value;
    }),
    build: checked(build, 'build metadata'),
  };
}

/** The canonical text of a version. */
export function format(v: Version): string {
  const pre = v.prerelease.length > 0 ? `-${v.prerelease.join('.')}` : '';
  const build = v.build.length > 0 ? `+${v.build.join('.')}` : '';
  return `${v.major}.${v.minor}.${v.patch}${pre}${build}`;
}

/** Precedence (semver.org, item 11): negative, zero or positive. Build
 * metadata does not count. */
export function compare(a: Version, b: Version): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  // A release ranks above its prereleases.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return Math.sign(b.prerelease.length - a.prerelease.length);
  }
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const order = compareIdentifiers(a.prerelease[i], b.prerelease[i]);
    if (order !== 0) return order;
  }
  return Math.sign(a.prerelease.length - b.prerelease.length);
}

function compareIdentifiers(x: Identifier, y: Identifier): number {
  if (typeof x === 'number' && typeof y === 'number') return Math.sign(x - y);
  // Numbers rank below words; words compare in ASCII order.
  if (typeof x === 'number') return -1;
  if (typeof y === 'number') return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface Sorted {
  /** The versions, lowest first (highest first when descending), as given. */
  sorted: string[];
  /** The highest release (no prerelease), if any. */
  latest_release: string | null;
  /** The highest version of all. */
  highest: string;
}

/** Sorts by precedence; equal versions keep their order. */
export function sort(versions: string[], descending = false): Sorted {
  const parsed = versions.map((text, i) => ({ text, version: parse(text, `versions[${i}]`) }));
  parsed.sort((a, b) => compare(a.version, b.version));
  const ascending = parsed.map((item) => item.text);
  const releases = parsed.filter((item) => item.version.prerelease.length === 0);
  return {
    sorted: descending ? ascending.slice().reverse() : ascending,
    latest_release: releases.length > 0 ? releases[releases.length - 1].text : null,
    highest: ascending[ascending.length - 1],
  };
}

/** The version after `v` when `part` changes, as `npm version` counts:
 * a prerelease of the version a bump would reach becomes that version
 * (1.0.0-rc.1 bumped major is 1.0.0), and `prerelease` counts up the last
 * number of a prerelease named `preid` (or starts one, at 0, on the next
 * patch). Build metadata is dropped. */
export function bump(v: Version, part: Part, preid?: string): Version {
  if (preid !== undefined && part !== 'prerelease') {
    throw new SemverError(`\`preid\` names a prerelease; it applies only with \`part\` "prerelease", not "${part}"`);
  }
  if (preid !== undefined && (!IDENTIFIER.test(preid) || /^[0-9]+$/.test(preid))) {
    throw new SemverError(`\`preid\` ${JSON.stringify(preid)} must be a word of 0-9, A-Z, a-z and - (not a number), such as "rc"`);
  }
  const pre = v.prerelease.length > 0;
  const next = (major: number, minor: number, patch: number, prerelease: Identifier[] = []): Version => ({
    major,
    minor,
    patch,
    prerelease,
    build: [],
  });
  switch (part) {
    case 'major':
      return pre && v.minor === 0 && v.patch === 0 ? next(v.major, 0, 0) : next(v.major + 1, 0, 0);
    case 'minor':
      return pre && v.patch === 0 ? next(v.major, v.minor, 0) : next(v.major, v.minor + 1, 0);
    case 'patch':
      return pre ? next(v.major, v.minor, v.patch) : next(v.major, v.minor, v.patch + 1);
    case 'prerelease': {
      if (!pre) return next(v.major, v.minor, v.patch + 1, preid === undefined ? [0] : [preid, 0]);
      const ids = v.prerelease.slice();
      if (preid !== undefined && ids[0] !== preid) return next(v.major, v.minor, v.patch, [preid, 0]);
      const last = ids[ids.length - 1];
      if (typeof last === 'number') ids[ids.length - 1] = last + 1;
      else ids.push(0);
      return next(v.major, v.minor, v.patch, ids);
    }
  }
}
