// The reference side of the tokenizer tests: encodes texts with the npm package
// gpt-3-encoder (fetched by fetch_gpt3_encoder.cmake) and prints what it made.
//
//   node npm_encode.js PACKAGE_DIR INPUT.json
//
// INPUT.json is an array of hex strings, the texts' bytes. The package takes JavaScript
// strings, so each text is first decoded as UTF-8 by a WHATWG TextDecoder (a maximal
// invalid byte sequence becomes one U+FFFD; ignoreBOM keeps a leading byte order mark as
// text). Output, one JSON array, one entry per text: {"ids": [...], "utf8": "<hex>"}
// where utf8 is the decoded string encoded back to UTF-8 (what the tokenizer saw).
'use strict';
const fs = require('fs');
const path = require('path');

const [packageDir, inputPath] = process.argv.slice(2);
if (!packageDir || !inputPath) {
  process.stderr.write('usage: node npm_encode.js PACKAGE_DIR INPUT.json\n');
  process.exit(2);
}
const { encode } = require(path.resolve(packageDir, 'Encoder.js'));
const texts = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const results = texts.map((hex) => {
  const text = decoder.decode(Buffer.from(hex, 'hex'));
  return { ids: encode(text), utf8: Buffer.from(text, 'utf8').toString('hex') };
});
process.stdout.write(JSON.stringify(results));
