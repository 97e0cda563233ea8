// Test fixture: a TypeScript plugin, built by plugins/build-ts (so checked
// by tsc against the types of its world), that reads its secrets through
// wasi:config/store. Its manifest grants [[dirs]] too, so that the world it
// is built against is composed of both grants
// (plugin-with-files-and-secrets). Tool `secret` answers the value of the
// secret `name` (or `none`, for a name it is not granted or that has no
// value); tool `secrets` the names getAll returns.
import { get, getAll, type Error as StoreError } from 'wasi:config/store@0.2.0-draft';
import type { CallResult, Tool } from 'corral:plugin/tools@0.3.0';
import { text } from './text.js';

export const tools = {
  list(): Tool[] {
    return [
      {
        name: 'secret',
        description: 'The value of one secret.',
        inputSchema: '{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}',
        icons: [],
      },
      { name: 'secrets', description: 'The names of the secrets.', inputSchema: '{"type": "object"}', icons: [] },
    ];
  },
  call(name: string, args: string): CallResult {
    try {
      if (name === 'secret') return text(get((JSON.parse(args) as { name: string }).name) ?? 'none');
      return text(
        getAll()
          .map(([key]) => key)
          .sort()
          .join(','),
      );
    } catch (err) {
      // A store error: the thrown value's payload is the WIT `error`.
      const payload = (err as { payload?: StoreError }).payload;
      return text(`error: ${payload ? `${payload.tag}: ${payload.val}` : String(err)}`, true);
    }
  },
};
