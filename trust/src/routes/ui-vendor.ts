// The explorer's ML-DSA-65 verifier: the installed @noble/post-quantum's ml-dsa.js and the modules it
// imports from @noble/hashes and @noble/curves, read once at startup and served as flat same-origin assets
// (/ui/noble-<package>-<path>.js) so the page checks both halves of a hybrid signature without loading
// anything from elsewhere. A browser cannot resolve the packages' bare specifiers under a CSP without
// inline scripts (an import map is one), so every import specifier is rewritten to its flat asset name.
// The set of files is fixed: a specifier outside it (a changed dependency) refuses startup rather than
// serving a module graph that fails in the browser.
import { readFileSync } from 'node:fs'
import { TrustConfigError } from '../errors.js'

/** The files served, by package, as paths inside the installed package. */
const VENDOR_FILES: Readonly<Record<string, readonly string[]>> = {
  'post-quantum': ['ml-dsa.js', '_crystals.js', 'utils.js'],
  curves: ['utils.js', 'abstract/fft.js', 'abstract/modular.js'],
  hashes: ['sha3.js', 'utils.js', '_u64.js'],
}

/** The asset the page imports the verifier from (it exports `ml_dsa65`). */
export const ML_DSA_ASSET = 'noble-post-quantum-ml-dsa.js'

// An import or re-export statement's module specifier, at the start of a line (so a JSDoc example,
// indented behind ` * `, is left alone). A side-effect-only import has no `from`: none of these files has one.
const STATIC_IMPORT = /^((?:import|export)\b[^;'"]*?\bfrom\s*)(['"])([^'"]+)\2/gm
const OTHER_IMPORT = /^import\s*['"(]|\bimport\s*\(/m

function assetName(pkg: string, path: string): string {
  return `noble-${pkg}-${path.replaceAll('/', '-')}`
}

// The installed package's folder, found the way Node resolves its import
function packageDir(pkg: string): URL {
  return new URL('./', import.meta.resolve(`@noble/${pkg}/utils.js`))
}

// The flat asset a specifier in `pkg`'s file `from` names, or undefined when outside the fixed set
function target(pkg: string, from: string, specifier: string): string | undefined {
  let targetPkg = pkg
  let path: string
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    path = new URL(specifier, `file:///${from}`).pathname.slice(1)
  } else {
    const match = /^@noble\/([a-z-]+)\/(.+)$/.exec(specifier)
    if (match === null) return undefined
    targetPkg = match[1] as string
    path = match[2] as string
  }
  return VENDOR_FILES[targetPkg]?.includes(path) === true ? assetName(targetPkg, path) : undefined
}

/** The verifier's modules, by asset name, with their imports rewritten; throws TrustConfigError when unservable. */
export function loadVendorModules(): Map<string, Buffer> {
  const modules = new Map<string, Buffer>()
  for (const [pkg, paths] of Object.entries(VENDOR_FILES)) {
    const dir = packageDir(pkg)
    for (const path of paths) {
      let text: string
      try {
        text = readFileSync(new URL(path, dir), 'utf8')
      } catch (err) {
        throw new TrustConfigError(`the explorer's ML-DSA-65 verifier: cannot read @noble/${pkg}/${path}`, err)
      }
      if (OTHER_IMPORT.test(text)) throw new TrustConfigError(`the explorer's ML-DSA-65 verifier: @noble/${pkg}/${path} has an import this server cannot rewrite`)
      const rewritten = text.replace(STATIC_IMPORT, (_whole, head: string, quote: string, specifier: string) => {
        const name = target(pkg, path, specifier)
        if (name === undefined) throw new TrustConfigError(`the explorer's ML-DSA-65 verifier: @noble/${pkg}/${path} imports ${specifier}, outside the served files`)
        return `${head}${quote}./${name}${quote}`
      })
      modules.set(assetName(pkg, path), Buffer.from(rewritten))
    }
  }
  return modules
}
