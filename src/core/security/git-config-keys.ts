// Git configuration that makes git run a program (or load more configuration) of the setter's
// choosing: setting one with `git -c`, `git config` or `git clone -c` is as good as running code.
const programKeys: readonly RegExp[] = [
  /^core\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy|alternaterefscommand)$/,
  /^sequence\.editor$/,
  /^pager\./,
  /^alias\./,
  /^diff\.external$/,
  /^diff\..+\.(command|textconv)$/,
  /\.textconv$/,
  /^merge\..+\.driver$/,
  /^filter\./,
  /^credential\.(.+\.)?helper$/,
  /^gpg\.(.+\.)?program$/,
  /^uploadpack\.packobjectshook$/,
  /^remote\..+\.(uploadpack|receivepack|vcs)$/,
  /^protocol\.(.+\.)?allow$/,
  /^url\..+\.(insteadof|pushinsteadof)$/,
  /^include\.path$/,
  /^includeif\..+\.path$/,
  /^init\.templatedir$/,
  /^(difftool|mergetool)\..+\.cmd$/,
  /^(man|browser)\..+\.(cmd|path)$/,
  /^(web|help)\.browser$/,
  /^sendemail\.(smtpserver|.+\.smtpserver|aliasesfile)$/,
  /^submodule\..+\.update$/,
  /^ssh\.variant$/,
  /^receive\.procreceiverefs$/,
  /^instaweb\./,
];

/**
 * Whether a configuration key runs programs. Section and variable names are case-insensitive in
 * git; subsection names are not, but lowering them only ever matches more.
 */
export function gitKeyRunsPrograms(key: string): boolean {
  const lowered = key.toLowerCase();
  return programKeys.some((pattern) => pattern.test(lowered));
}
