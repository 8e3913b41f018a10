// Entry point of the netplay command (not implemented yet).
console.error('netplay: not implemented yet');
process.exitCode = 2;

export {};
