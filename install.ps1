# agent-block installer for Windows: downloads the prebuilt binary from a GitHub release, checks
# its SHA-256 before unpacking it, and installs it.
#
#   irm https://github.com/OWNER/REPO/releases/latest/download/install.ps1 | iex
#   powershell -ExecutionPolicy Bypass -File install.ps1 [-Version X]
#
# -Version X                  install release vX (default: the latest release)
# AGENT_BLOCK_INSTALL_DIR     where agent-block.exe goes (default: ~\.agent-block\bin)
# AGENT_BLOCK_DOWNLOAD_URL    a mirror of the releases page, laid out like GitHub's:
#                             <url>/latest/download/<file> and <url>/download/v<X>/<file>
#                             (default: https://github.com/$AGENT_BLOCK_REPO/releases)
# AGENT_BLOCK_REPO            the GitHub repository (default: the one this installer came from)
#
# The same contract as install.sh: nothing is written outside a temporary directory until the
# archive's checksum matches its .sha256 file and the unpacked binary has run --version; the
# binary then replaces the installed one in one move. HTTPS only, except from this machine.
# Windows PowerShell 5.1 and PowerShell 7.
param(
  [string]$Version = "latest"
)
$ErrorActionPreference = "Stop"
Set-StrictMode -Version 2.0

# The release workflow writes its own repository here when it publishes this file.
$DefaultRepo = "agent-block/agent-block"

function Say([string]$Message) { [Console]::Error.WriteLine("agent-block installer: $Message") }
function Fail([string]$Message) { throw "agent-block installer: error: $Message" }

$Version = $Version -replace '^v', ''
if ($Version -ne "latest" -and $Version -notmatch '^[0-9][0-9A-Za-z.+-]*$') {
  Fail "-Version must be a release version like 0.2.0, got '$Version'"
}

# --- which binary --------------------------------------------------------------------------------
if ([System.Environment]::OSVersion.Platform -ne [System.PlatformID]::Win32NT) {
  Fail "install.ps1 is for Windows; on Linux and macOS use install.sh from the same release"
}
$arch = $env:PROCESSOR_ARCHITEW6432
if (-not $arch) { $arch = $env:PROCESSOR_ARCHITECTURE }
switch ($arch) {
  "AMD64" { }
  "ARM64" { Say "Windows on Arm: installing the x86_64 binary, which runs under emulation" }
  default { Fail "no prebuilt binary for the architecture '$arch' (there is an x86_64 one); run agent-block from source instead (see the README)" }
}
$target = "x86_64-pc-windows-msvc"
$archive = "agent-block-$target.zip"

# --- where from ----------------------------------------------------------------------------------
$repo = if ($env:AGENT_BLOCK_REPO) { $env:AGENT_BLOCK_REPO } else { $DefaultRepo }
$base = if ($env:AGENT_BLOCK_DOWNLOAD_URL) { $env:AGENT_BLOCK_DOWNLOAD_URL } else { "https://github.com/$repo/releases" }
$base = $base.TrimEnd("/")
# The host is parsed, not matched as a prefix (http://localhost:@other-host/ is other-host).
$parsed = $null
$local = $false
if ($base -match '^http://' -and [Uri]::TryCreate($base, [UriKind]::Absolute, [ref]$parsed)) {
  $local = $parsed.UserInfo -eq "" -and @("127.0.0.1", "localhost", "[::1]") -contains $parsed.Host
}
if ($base -notmatch '^https://' -and -not $local) {
  Fail "AGENT_BLOCK_DOWNLOAD_URL must be an https:// URL (plain http only from this machine), got '$base'"
}
$from = if ($Version -eq "latest") { "$base/latest/download" } else { "$base/download/v$Version" }
$dir = if ($env:AGENT_BLOCK_INSTALL_DIR) { $env:AGENT_BLOCK_INSTALL_DIR } else { Join-Path $HOME ".agent-block\bin" }

[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
$ProgressPreference = "SilentlyContinue" # Invoke-WebRequest is many times slower with its progress bar

function Get-File([string]$Url, [string]$File) {
  try {
    Invoke-WebRequest -Uri $Url -OutFile $File -UseBasicParsing
  } catch {
    Fail "cannot download ${Url}: $($_.Exception.Message)"
  }
}

$tmp = Join-Path ([System.IO.Path]::GetTempPath()) ("agent-block-" + [System.Guid]::NewGuid().ToString("N"))
New-Item -ItemType Directory -Path $tmp | Out-Null
try {
  # --- download and check ------------------------------------------------------------------------
  Say "downloading $from/$archive"
  $zip = Join-Path $tmp $archive
  Get-File "$from/$archive" $zip
  Get-File "$from/$archive.sha256" "$zip.sha256"
  $line = (Get-Content -LiteralPath "$zip.sha256" -TotalCount 1)
  if ($null -eq $line -or $line -notmatch '^([0-9a-fA-F]{64})(\s|$)') {
    Fail "$archive.sha256 does not start with a SHA-256; nothing was installed"
  }
  $expected = $Matches[1].ToLowerInvariant()
  $actual = (Get-FileHash -Algorithm SHA256 -LiteralPath $zip).Hash.ToLowerInvariant()
  if ($actual -ne $expected) {
    Fail "checksum mismatch for ${archive}: the release says $expected, the download is $actual; nothing was installed"
  }

  $unpacked = Join-Path $tmp "unpacked"
  Expand-Archive -LiteralPath $zip -DestinationPath $unpacked
  $new = Join-Path $unpacked "agent-block-$target\agent-block.exe"
  if (-not (Test-Path -LiteralPath $new -PathType Leaf)) {
    Fail "$archive holds no agent-block-$target\agent-block.exe; nothing was installed"
  }
  $out = & $new --version 2>&1
  if ($LASTEXITCODE -ne 0) { Fail "the downloaded binary does not run on this machine ($out); nothing was installed" }
  $got = @($out)[0]

  # --- install -----------------------------------------------------------------------------------
  New-Item -ItemType Directory -Force -Path $dir | Out-Null
  $staged = Join-Path $dir ".agent-block.new.exe"
  Copy-Item -LiteralPath $new -Destination $staged -Force
  try {
    Move-Item -LiteralPath $staged -Destination (Join-Path $dir "agent-block.exe") -Force
  } catch {
    Remove-Item -LiteralPath $staged -Force -ErrorAction SilentlyContinue
    Fail "cannot replace $(Join-Path $dir 'agent-block.exe') (is it running?): $($_.Exception.Message)"
  }
  Say "installed $got to $(Join-Path $dir 'agent-block.exe')"
  $onPath = ($env:Path -split ';') | Where-Object { $_.TrimEnd('\') -ieq $dir.TrimEnd('\') }
  if (-not $onPath) {
    Say "$dir is not on PATH; add it for your user with:"
    Say "  [Environment]::SetEnvironmentVariable('Path', '$dir;' + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')"
  }
} finally {
  Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
}
