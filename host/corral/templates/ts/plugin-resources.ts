
// --- Resources, prompts and completion ---------------------------------------
// Because this module exports `resources` and `prompts`, ./build makes it a
// component of the world `plugin-full`, which exports `resources`, `prompts`
// and `completion` besides `tools` (a list may be empty), and types them
// from that world. What they serve is in greetings.ts. (An import may stand
// anywhere at a module's top level.)

import type { Contents, Listing } from 'corral:plugin/resources@0.3.0';
import type { Prompt, PromptResult } from 'corral:plugin/prompts@0.3.0';
import type { Completions, Reference } from 'corral:plugin/completion@0.3.0';
import { completeLanguage, helloIn, markdown } from './greetings.js';

// A document at a fixed URI, and documents at the URIs that match a template:
// {{scheme}}://greetings/french gives language = "french".
const GREETINGS_URI = '{{scheme}}://greetings';
const GREETING_TEMPLATE = '{{scheme}}://greetings/{language}';

function listResources(): Listing {
  return {
    resources: [
      {
        uri: GREETINGS_URI,
        name: 'greetings',
        description: 'Hello in every language this plugin knows',
        mimeType: 'text/markdown',
        icons: [],
      },
    ],
    templates: [
      {
        uriTemplate: GREETING_TEMPLATE,
        name: 'greeting',
        description: 'Hello in one language',
        mimeType: 'text/plain',
        icons: [],
      },
    ],
  };
}

/** The contents, or a thrown read-error: `not-found` is the protocol's
 * "resource not found". */
function read(uri: string): Contents[] {
  if (uri === GREETINGS_URI) return [{ uri, mimeType: 'text/markdown', body: { tag: 'text', val: markdown() } }];
  const prefix = `${GREETINGS_URI}/`;
  const hello = uri.startsWith(prefix) ? helloIn(uri.slice(prefix.length)) : undefined;
  if (hello === undefined) throw { tag: 'not-found' };
  return [{ uri, mimeType: 'text/plain', body: { tag: 'text', val: hello } }];
}

function listPrompts(): Prompt[] {
  return [
    {
      name: 'greet',
      description: 'Greet someone in a language of your choice',
      arguments: [
        { name: 'name', description: 'Who to greet', required: true },
        { name: 'language', description: 'The language to greet in, e.g. french (default: english)', required: false },
      ],
      icons: [],
    },
  ];
}

/** The messages, or a thrown get-error. `args`: [name, value] pairs,
 * already checked against the prompt's arguments. */
function get(name: string, args: Array<[string, string]>): PromptResult {
  const given = new Map(args);
  const language = given.get('language') || 'english';
  const hello = helloIn(language);
  if (name !== 'greet' || hello === undefined) {
    throw { tag: 'invalid-arguments', val: `no greeting in ${language}` };
  }
  const ask = `Greet ${given.get('name') ?? ''} warmly in ${language}, starting with the greeting below.`;
  // A conversation for the client's model, with a resource embedded in it.
  return {
    messages: [
      { role: 'user', content: { tag: 'text', val: { text: ask } } },
      {
        role: 'user',
        content: {
          tag: 'embedded-resource',
          val: { uri: `${GREETINGS_URI}/${language}`, mimeType: 'text/plain', contents: { tag: 'text', val: hello } },
        },
      },
    ],
  };
}

function complete(reference: Reference, name: string, value: string): Completions {
  const asksForLanguage =
    name === 'language' &&
    ((reference.tag === 'prompt' && reference.val === 'greet') ||
      (reference.tag === 'resource-template' && reference.val === GREETING_TEMPLATE));
  return { values: asksForLanguage ? completeLanguage(value) : [], hasMore: false };
}

export const resources: typeof import('corral:plugin/resources@0.3.0') = { list: listResources, read };
export const prompts: typeof import('corral:plugin/prompts@0.3.0') = { list: listPrompts, get };
export const completion: typeof import('corral:plugin/completion@0.3.0') = { complete };
