// How every jest config of the repository turns source into what jest loads: TypeScript through @swc/jest, and
// the ES-module-only packages (file-type and its dependencies) to CommonJS too, since jest loads CommonJS.
module.exports = {
  transform: { '^.+\\.[tj]s$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  transformIgnorePatterns: ['/node_modules/(?!(file-type|strtok3|token-types|@tokenizer/inflate|uint8array-extras|@borewit/text-codec)/)'],
};
