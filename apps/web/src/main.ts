// Browser demo entry (not implemented yet).
const status = document.getElementById('status');
if (status) status.textContent = 'netplay browser demo: not implemented yet';
