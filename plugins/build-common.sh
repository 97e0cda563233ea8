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

# javascript_world MANIFEST ENTRY: the world a JavaScript or TypeScript
# project is built against: plugin-full when its entry module (plugin.js or
# plugin.ts) exports `resources` or `prompts`; else, from its manifest (which
# may be missing): plugin-with-state when it has a [state] table,
# plugin-with-files when it grants [[dirs]] (JavaScript has no file API of
# its own: the plugin imports wasi:filesystem), plugin-with-state-and-files
# for both, else plugin. Calls the sourcing script's `die` for a manifest no
# world fits.
javascript_world() {
    local state="" files="" full=""
    has_table "$1" state && state=1
    has_array_table "$1" dirs && files=1
    grep -Eq '^export const (resources|prompts)\b' "$2" && full=1
    case "$full,$state,$files" in
    1,,) echo plugin-full ;;
    1,*) die "$1 grants [state] or [[dirs]] to a plugin with resources or prompts; no world has both yet" ;;
    ,1,1) echo plugin-with-state-and-files ;;
    ,1,) echo plugin-with-state ;;
    ,,1) echo plugin-with-files ;;
    *) echo plugin ;;
    esac
}
