// Test fixture: a JavaScript plugin, built by plugins/build-js, that reads
// its secrets through wasi:config/store. Its manifest grants [state] too,
// so that the world it is built against is composed of both grants
// (plugin-with-state-and-secrets). Tool `secret` answers the value of the
// secret `name` (or `none`, for a name it is not granted or that has no
// value); tool `secrets` the names getAll returns.
import { get, getAll } from 'wasi:config/store@0.2.0-draft';

const text = (value, isError = false) => ({ content: [{ tag: 'text', val: { text: value } }], isError });

export const tools = {
  list() {
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
  call(name, args) {
    try {
      if (name === 'secret') return text(get(JSON.parse(args).name) ?? 'none');
      return text(getAll().map(([key]) => key).sort().join(','));
    } catch (err) {
      // A store error: err.payload is { tag: 'upstream' | 'io', val: message }.
      return text(`error: ${err.payload?.val ?? err}`, true);
    }
  },
};
