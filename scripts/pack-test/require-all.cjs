// CommonJS loads every installed package through require(esm) (Node >= 20.19, the packages' engines).
const names = JSON.parse(process.argv[2]);
for (const name of names) {
  const m = require(name);
  if (Object.keys(m).length === 0) throw new Error(`${name}: require() gave no exports`);
}
console.log(`OK require() of ${names.length} packages`);
