// Unit tests of semver.ts on Node, from the JavaScript plugins/build-ts
// compiles them to (tests/languages.rs runs them with `node --test`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SemverError, bump, compare, format, parse, sort } from './semver.js';
import type { Part } from './semver.js';

test('parses every part of a version', () => {
  assert.deepEqual(parse('2.0.0-rc.1+build.5'), {
    major: 2,
    minor: 0,
    patch: 0,
    prerelease: ['rc', 1],
    build: ['build', '5'],
  });
  assert.equal(format(parse('2.0.0-rc.1+build.5')), '2.0.0-rc.1+build.5');
});

test('a malformed version says what is wrong', () => {
  const cases: [string, string][] = [
    ['1.2', 'expected MAJOR.MINOR.PATCH, such as 1.4.2, but it has 2 part(s)'],
    ['v1.2.3', 'drop the leading "v": write "1.2.3"'],
    ['1.02.3', 'MINOR "02" has a leading zero'],
    ['1.2.x', 'PATCH "x" is not a non-negative integer'],
    ['1.2.3-rc..1', 'the prerelease has an empty identifier'],
    ['1.2.3-01', 'the prerelease identifier "01" has a leading zero'],
    ['1.2.3+b_1', 'the build metadata identifier "b_1" may hold only'],
  ];
  for (const [text, why] of cases) {
    assert.throws(
      () => parse(text),
      (err: unknown) => err instanceof SemverError && err.message.includes(why),
      text,
    );
  }
});

test('precedence follows semver.org item 11', () => {
  const ordered = [
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '1.0.1',
    '1.10.0',
    '2.0.0',
  ];
  for (let i = 0; i + 1 < ordered.length; i++) {
    assert.equal(compare(parse(ordered[i]), parse(ordered[i + 1])), -1, `${ordered[i]} < ${ordered[i + 1]}`);
  }
  assert.equal(compare(parse('1.0.0+a'), parse('1.0.0+b')), 0, 'build metadata is ignored');
  const shuffled = [...ordered].reverse();
  assert.deepEqual(sort(shuffled).sorted, ordered);
  assert.deepEqual(sort(['1.0.0-rc.1', '0.9.0', '1.0.0-beta']), {
    sorted: ['0.9.0', '1.0.0-beta', '1.0.0-rc.1'],
    highest: '1.0.0-rc.1',
    latest_release: '0.9.0',
  });
  assert.throws(() => sort(['1.0.0', '1.0']), /`versions\[1\]` "1.0" is not a semantic version/);
});

test('bumps as npm version counts', () => {
  const cases: [string, Part, string | undefined, string][] = [
    ['1.2.3', 'major', undefined, '2.0.0'],
    ['1.2.3', 'minor', undefined, '1.3.0'],
    ['1.2.3+b', 'patch', undefined, '1.2.4'],
    ['1.0.0-rc.1', 'major', undefined, '1.0.0'],
    ['1.2.0-rc.1', 'minor', undefined, '1.2.0'],
    ['1.2.3-rc.1', 'patch', undefined, '1.2.3'],
    ['1.2.3', 'prerelease', undefined, '1.2.4-0'],
    ['1.2.3', 'prerelease', 'rc', '1.2.4-rc.0'],
    ['1.2.4-rc.1', 'prerelease', 'rc', '1.2.4-rc.2'],
    ['1.2.4-rc.1', 'prerelease', 'beta', '1.2.4-beta.0'],
    ['1.2.4-alpha', 'prerelease', undefined, '1.2.4-alpha.0'],
  ];
  for (const [from, part, preid, to] of cases) {
    assert.equal(format(bump(parse(from), part, preid)), to, `${from} ${part} ${preid ?? ''}`);
  }
  assert.throws(() => bump(parse('1.2.3'), 'minor', 'rc'), /applies only with `part` "prerelease"/);
  assert.throws(() => bump(parse('1.2.3'), 'prerelease', '7'), /must be a word/);
});
