// The channel list of the block above.
declare const channels: readonly import('@netplay/transport').ChannelSpec[];
