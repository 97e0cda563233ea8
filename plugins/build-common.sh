# What plugins/build-c, build-go, build-js, build-python and build-ts share:
# they source this file (it is not run on its own), and rebuild a plugin when
# it changes, as when they do.

# has_table MANIFEST TABLE: whether the manifest (which may be missing) has
# the table [TABLE] (a line of its own, perhaps indented or commented after).
has_table() {
    [ -f "$1" ] && grep -Eq "^[[:space:]]*\\[$2\\][[:space:]]*(#.*)?\$" "$1"
}

# has_array_table MANIFEST TABLE: likewise for an array of tables, [[TABLE]].
has_array_table() {
    [ -f "$1" ] && grep -Eq "^[[:space:]]*\\[\\[$2\\]\\][[:space:]]*(#.*)?\$" "$1"
}

# install_manifest SOURCE DEST: the project's manifest beside its component,
# copied by rename if changed; a manifest the project no longer has is
# removed, so that no stale grant outlives it (as plugins/build does).
install_manifest() {
    local source="$1" dest="$2"
    if [ ! -f "$source" ]; then
        rm -f "$dest"
        return
    fi
    if ! cmp -s "$source" "$dest"; then
        cp "$source" "$dest.tmp"
        mv "$dest.tmp" "$dest"
    fi
}

# The world a project is built against is composed from its grants, here
# and nowhere else: the contract's `plugin` (or `plugin-full`, for a plugin
# that also offers resources, prompts and completion), plus, for each grant
# its language reaches through an imported WASI interface, the world of that
# grant (wit/plugin-with-GRANT.wit), in the order state, http, files,
# secrets. Its name says what it holds: `plugin`, `plugin-with-secrets`,
# `plugin-with-http-and-secrets`, `plugin-full-with-state-and-secrets`.
# Where wit/ names such a world already (plugin-with-state,
# plugin-with-state-and-files, ...) that one is used as it is; any other is
# written into a copy of wit/ in the build's work folder (world_wit), so
# that no combination needs a world of its own in wit/.

# manifest_grants MANIFEST GRANT...: which of the GRANTs (state, http, files,
# secrets: the ones the calling script's language imports an interface for)
# the manifest (which may be missing) grants, space-separated, in the
# order above: [state], [http], [[dirs]], [secrets].
manifest_grants() {
    local manifest="$1" grant granted=()
    shift
    for grant in state http files secrets; do
        case " $* " in *" $grant "*) ;; *) continue ;; esac
        case "$grant" in
        files) has_array_table "$manifest" dirs || continue ;;
        *) has_table "$manifest" "$grant" || continue ;;
        esac
        granted+=("$grant")
    done
    echo "${granted[*]}"
}

# world_name BASE GRANT...: the name of the world BASE (plugin or
# plugin-full) with the GRANTs' imports: BASE alone, or
# BASE-with-G1-and-G2...
world_name() {
    local name="$1"
    shift
    [ "$#" -eq 0 ] || name="$name-with-$1"
    shift || true
    local grant
    for grant in "$@"; do
        name="$name-and-$grant"
    done
    echo "$name"
}

# world_wit WIT_DIR WORLD WORK: a WIT folder that holds WORLD (a name
# world_name made): WIT_DIR when one of its files declares it, else
# WORK/wit, a copy of WIT_DIR (its links followed) with WORLD written into
# WORK/wit/composed.wit:
#     world plugin-with-http-and-secrets {
#         include plugin;
#         include plugin-with-http;
#         include plugin-with-secrets;
#     }
# Calls the sourcing script's `die` for a name it cannot read or a grant
# that has no world in WIT_DIR (an older contract a project is pinned to).
world_wit() {
    local wit="$1" world="$2" work="$3" base grants grant
    if grep -Eqs "^world $world[[:space:]]*\{" "$wit"/*.wit; then
        echo "$wit"
        return
    fi
    case "$world" in
    plugin-full-with-*) base=plugin-full grants="${world#plugin-full-with-}" ;;
    plugin-with-*) base=plugin grants="${world#plugin-with-}" ;;
    *) die "no world $world in $wit" ;;
    esac
    rm -rf "$work/wit"
    mkdir -p "$work"
    cp -rL "$wit" "$work/wit"
    {
        echo "// Written by plugins/build-common.sh (world_wit) for this build: the"
        echo "// world of the contract beside it with the imports of the grants."
        echo "world $world {"
        echo "    include $base;"
        for grant in ${grants//-and-/ }; do
            grep -Eqs "^world plugin-with-$grant[[:space:]]*\{" "$wit"/*.wit ||
                die "$wit has no world plugin-with-$grant (for the grant $grant of world $world)"
            echo "    include plugin-with-$grant;"
        done
        echo "}"
    } >"$work/wit/composed.wit"
    echo "$work/wit"
}

# javascript_world MANIFEST ENTRY: the world a JavaScript or TypeScript
# project is built against: plugin-full when its entry module (plugin.js or
# plugin.ts) exports `resources` or `prompts`, else plugin; with the imports
# its manifest (which may be missing) grants: wasi:keyvalue for [state],
# wasi:filesystem for [[dirs]] (JavaScript has no file API of its own: the
# plugin imports wasi:filesystem), wasi:config for [secrets]. For example
# plugin-with-state, plugin-with-files-and-secrets,
# plugin-full-with-state.
javascript_world() {
    local base=plugin grants
    grep -Eq '^export const (resources|prompts)\b' "$2" && base=plugin-full
    grants="$(manifest_grants "$1" state files secrets)"
    # shellcheck disable=SC2086 # one word per grant
    world_name "$base" $grants
}
