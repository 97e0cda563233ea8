// Corral example plugin in TypeScript: semantic versions parsed, sorted by
// precedence and bumped. Built by plugins/build-ts: the contract's types are
// generated from wit/ (`jco guest-types`, world `plugin`), tsc checks this
// project against them in strict mode and compiles it, and componentize-js
// makes the JavaScript a component.
//
// This file is the contract's glue: the tools' descriptions (`list`) and
// their calls (`call`), typed by the generated declarations of
// 'corral:plugin/tools@0.3.0'. The versions themselves are in semver.ts,
// and the question `semver_bump` may ask the user is in ask.ts.

import { log } from 'corral:plugin/host@0.3.0';
import type { CallResult, Tool } from 'corral:plugin/tools@0.3.0';
import { AskFailed, canElicit, elicit } from './ask.js';
import { PARTS, SemverError, bump, format, parse, sort } from './semver.js';
import type { Part } from './semver.js';

/** The arguments of each tool, as its input schema declares them (the
 * host has checked every call's arguments against it). */
interface Arguments {
  semver_parse: { version: string };
  semver_sort: { versions: string[]; descending?: boolean };
  semver_bump: { version: string; part?: Part; preid?: string };
}
type Name = keyof Arguments;

const version = { type: 'string', minLength: 1, maxLength: 256, description: 'A semantic version, such as 1.4.2 or 2.0.0-rc.1+build.5.' };
const identifiers = (what: string) => ({
  type: 'array',
  items: { type: ['integer', 'string'] },
  description: `${what}; numbers as integers.`,
});

/** Pure functions of their input: safe to call again, change nothing. */
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const TOOLS: Record<Name, { title: string; description: string; input: object; output: object }> = {
  semver_parse: {
    title: 'Parse a semantic version',
    description:
      'Check that a string is a semantic version (semver.org 2.0.0) and split it into MAJOR, MINOR, PATCH, ' +
      'prerelease identifiers and build metadata. A malformed version is an error that says what is wrong.',
    input: { type: 'object', properties: { version }, required: ['version'], additionalProperties: false },
    output: {
      type: 'object',
      properties: {
        version: { type: 'string', description: 'The version, as given.' },
        major: { type: 'integer', minimum: 0 },
        minor: { type: 'integer', minimum: 0 },
        patch: { type: 'integer', minimum: 0 },
        prerelease: identifiers('The prerelease identifiers (rc.1 is ["rc", 1]), empty for a release'),
        build: { type: 'array', items: { type: 'string' }, description: 'The build metadata identifiers.' },
        is_prerelease: { type: 'boolean' },
      },
      required: ['version', 'major', 'minor', 'patch', 'prerelease', 'build', 'is_prerelease'],
      additionalProperties: false,
    },
  },
  semver_sort: {
    title: 'Sort semantic versions',
    description:
      'Sort semantic versions by precedence (1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-beta < 1.0.0; build metadata ' +
      'is ignored), and name the highest version and the latest release (no prerelease).',
    input: {
      type: 'object',
      properties: {
        versions: { type: 'array', items: version, minItems: 1, maxItems: 1000 },
        descending: { type: 'boolean', default: false, description: 'Highest first.' },
      },
      required: ['versions'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        sorted: { type: 'array', items: { type: 'string' } },
        highest: { type: 'string' },
        latest_release: { type: ['string', 'null'], description: 'null when every version is a prerelease.' },
      },
      required: ['sorted', 'highest', 'latest_release'],
      additionalProperties: false,
    },
  },
  semver_bump: {
    title: 'Bump a semantic version',
    description:
      'The next version after `version` when `part` changes, as `npm version` counts (1.2.3 minor is 1.3.0; ' +
      '1.0.0-rc.1 major is 1.0.0; 1.2.3 prerelease with preid rc is 1.2.4-rc.0). Without `part`, asks the user ' +
      'which part to bump when the client can ask.',
    input: {
      type: 'object',
      properties: {
        version,
        part: { type: 'string', enum: PARTS, description: 'What to increment; leave it out to ask the user.' },
        preid: { type: 'string', minLength: 1, maxLength: 32, description: 'The prerelease name, such as rc (part prerelease only).' },
      },
      required: ['version'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        from: { type: 'string' },
        to: { type: 'string' },
        part: { type: 'string', enum: PARTS },
        asked: { type: 'boolean', description: 'Whether the user chose the part.' },
      },
      required: ['from', 'to', 'part', 'asked'],
      additionalProperties: false,
    },
  },
};

function list(): Tool[] {
  return (Object.keys(TOOLS) as Name[]).map((name) => ({
    name,
    title: TOOLS[name].title,
    description: TOOLS[name].description,
    inputSchema: JSON.stringify(TOOLS[name].input),
    outputSchema: JSON.stringify(TOOLS[name].output),
    annotations: { title: TOOLS[name].title, ...readOnly },
    icons: [],
  }));
}

/** A successful result: the structured content, and the same JSON as text
 * for clients that read only the text. */
function structured(value: object): CallResult {
  const text = JSON.stringify(value);
  return { content: [{ tag: 'text', val: { text } }], structuredContent: text, isError: false };
}

/** A tool execution error: the model reads the message and can retry. */
function failure(message: string): CallResult {
  return { content: [{ tag: 'text', val: { text: message } }], isError: true };
}

function semverParse({ version }: Arguments['semver_parse']): CallResult {
  const v = parse(version);
  return structured({ version, ...v, is_prerelease: v.prerelease.length > 0 });
}

function semverSort({ versions, descending }: Arguments['semver_sort']): CallResult {
  return structured(sort(versions, descending ?? false));
}

function semverBump(args: Arguments['semver_bump']): CallResult {
  // Parse first: a bad version is the model's to fix, whatever the user
  // would have chosen.
  const from = parse(args.version);
  let { part, preid } = args;
  const asked = part === undefined;
  if (part === undefined) {
    if (!canElicit()) {
      return failure(
        `\`part\` is missing and this client cannot ask the user which part of ${args.version} to bump: ` +
          `pass \`part\`, one of ${PARTS.join(', ')}.`,
      );
    }
    const answer = elicit('part', `Bump ${args.version} to which next version?`, {
      properties: {
        part: { type: 'string', title: 'Part to bump', enum: PARTS },
        preid: { type: 'string', title: 'Prerelease name (for a prerelease, such as rc)', maxLength: 32 },
      },
      required: ['part'],
    });
    if (answer === undefined) {
      return failure(`Nothing bumped: the user declined to choose which part of ${args.version} to bump.`);
    }
    part = answer.part;
    preid = preid ?? (answer.preid || undefined);
  }
  const to = format(bump(from, part, preid));
  log('info', `semver_bump: ${args.version} -> ${to} (${part}${asked ? ', chosen by the user' : ''})`);
  return structured({ from: args.version, to, part, asked });
}

function call(name: string, argumentsJson: string): CallResult {
  const args: unknown = JSON.parse(argumentsJson);
  try {
    switch (name) {
      case 'semver_parse':
        return semverParse(args as Arguments['semver_parse']);
      case 'semver_sort':
        return semverSort(args as Arguments['semver_sort']);
      case 'semver_bump':
        return semverBump(args as Arguments['semver_bump']);
      default:
        return failure(`unknown tool: ${name}`);
    }
  } catch (err) {
    if (err instanceof SemverError || err instanceof AskFailed) return failure(err.message);
    // Anything else is a bug: let it escape. The call then fails, and its
    // error carries the message and stack the engine prints to stderr.
    throw err;
  }
}

/** The world's export, checked against the contract's declaration: a
 * missing function or a wrong signature fails the build. */
export const tools: typeof import('corral:plugin/tools@0.3.0') = { list, call };
