// Corral example plugin in JavaScript: checklists offered as resources
// (`checklist://NAME`, and the template `checklist://{name}`), a prompt
// (`run_checklist`, which embeds a checklist) and completion of the names.
//
// Built by plugins/build-js with componentize-js against wit/, in the world
// `plugin-full` because this module exports `resources` (or `prompts`): a
// component of that world exports `tools`, `resources`, `prompts` and
// `completion`, so this module exports all four (its tool list is empty).
// The checklists themselves are in checklists.js.

import { CHECKLISTS, complete as completeName, markdown, read, uriOf } from './checklists.js';

const TEMPLATE = 'checklist://{name}';
const MARKDOWN = 'text/markdown';

/** No tools: the world `plugin-full` exports `tools`, so it is here. */
export const tools = {
  list() {
    return [];
  },
  call(name) {
    return { content: [{ tag: 'text', val: { text: `unknown tool: ${name}` } }], isError: true };
  },
};

export const resources = {
  list() {
    return {
      resources: Object.keys(CHECKLISTS).map((name) => ({
        uri: uriOf(name),
        name,
        title: `The ${name} checklist`,
        mimeType: MARKDOWN,
        icons: [],
      })),
      templates: [
        { uriTemplate: TEMPLATE, name: 'checklist', description: 'A checklist by name', mimeType: MARKDOWN, icons: [] },
      ],
    };
  },
  // A result: the contents, or a thrown read-error.
  read(uri) {
    const text = read(uri);
    if (text === undefined) throw { tag: 'not-found' };
    return [{ uri, mimeType: MARKDOWN, body: { tag: 'text', val: text } }];
  },
};

export const prompts = {
  list() {
    return [
      {
        name: 'run_checklist',
        title: 'Run a checklist',
        description: 'Walk through a checklist item by item',
        arguments: [{ name: 'name', description: 'The checklist, e.g. release', required: true }],
        icons: [],
      },
    ];
  },
  // A result: the messages, or a thrown get-error.
  get(name, args) {
    const checklist = new Map(args).get('name') ?? '';
    const text = markdown(checklist);
    if (name !== 'run_checklist' || text === undefined) {
      const names = Object.keys(CHECKLISTS).join(', ');
      throw { tag: 'invalid-arguments', val: `no checklist "${checklist}"; the checklists are ${names}` };
    }
    return {
      description: `Run the ${checklist} checklist`,
      messages: [
        { role: 'user', content: { tag: 'text', val: { text: 'Walk me through this checklist, one item at a time.' } } },
        {
          role: 'user',
          content: { tag: 'embedded-resource', val: { uri: uriOf(checklist), mimeType: MARKDOWN, contents: { tag: 'text', val: text } } },
        },
      ],
    };
  },
};

export const completion = {
  complete(reference, name, value) {
    const asksForName =
      name === 'name' &&
      ((reference.tag === 'prompt' && reference.val === 'run_checklist') ||
        (reference.tag === 'resource-template' && reference.val === TEMPLATE));
    return { values: asksForName ? completeName(value) : [], hasMore: false };
  },
};
