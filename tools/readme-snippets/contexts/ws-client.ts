// The channel list of the block above and the application's lag indicator.
declare const channels: readonly import('@netplay/transport').ChannelSpec[];
declare function showLagIcon(): void;
