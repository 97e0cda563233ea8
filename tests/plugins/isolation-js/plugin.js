// Test fixture: a JavaScript plugin, built by plugins/build-js, whose tool
// `visit` keeps what it was called with in module-level state (a counter,
// an array, a property of globalThis) and answers with all of it. Each call
// runs in an instance no call ran in before, so every answer holds its own
// call alone: {"calls": 1, "marks": [MARK], "last": null}. It also logs its
// mark, which must reach the call that made it.
//
// Its tool `glue` answers whether the build created the built-in classes of
// componentize-js's glue realm before the snapshot (the mark
// plugins/build-js.d/componentize.mjs leaves on the global when it did), and
// whether its exported functions are plain properties again once the glue
// has read them, `helper` too, which the glue never reads.
import { log } from 'corral:plugin/host@0.3.0';

let calls = 0;
const marks = [];

export const tools = {
  list() {
    return [
      {
        name: 'visit',
        description: 'Leaves a mark in module-level state.',
        inputSchema: '{"type": "object", "properties": {"mark": {"type": "string"}}, "required": ["mark"]}',
        icons: [],
      },
      {
        name: 'glue',
        description: "Whether the glue's realm was warmed in the snapshot.",
        inputSchema: '{"type": "object"}',
        icons: [],
      },
    ];
  },
  call(name, args) {
    if (name === 'glue') {
      const warmed = globalThis[Symbol.for('corral.glue-realm-warmed')] === true;
      const plain = ['list', 'call', 'helper'].every((own) => 'value' in Object.getOwnPropertyDescriptor(tools, own));
      return { content: [{ tag: 'text', val: { text: JSON.stringify({ warmed, plain }) } }], isError: false };
    }
    const { mark } = JSON.parse(args);
    calls += 1;
    marks.push(mark);
    const seen = { calls, marks, last: globalThis.lastMark ?? null };
    globalThis.lastMark = mark;
    log('info', `visited by ${mark}`);
    return { content: [{ tag: 'text', val: { text: JSON.stringify(seen) } }], isError: false };
  },
  helper() {
    return 'not an export of the world';
  },
};
