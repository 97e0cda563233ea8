// A call result of one text, shaped as the contract's `call-result`
// (plugins/build-ts wants tests, and Node's tests cannot import the
// contract's modules: text.test.ts tests this one).
export const text = (value: string, isError = false) => ({
  content: [{ tag: 'text' as const, val: { text: value } }],
  isError,
});
