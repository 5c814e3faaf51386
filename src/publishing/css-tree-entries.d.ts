// Types for the two css-tree entry points css-rules.ts loads. @types/css-tree describes only the
// package's main entry; these export the very same functions (css-tree's package.json "exports").
declare module 'css-tree/tokenizer' {
  export { tokenize, tokenTypes } from 'css-tree'
}

declare module 'css-tree/utils' {
  export { ident, string, url } from 'css-tree'
}
