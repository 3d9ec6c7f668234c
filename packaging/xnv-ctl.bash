# bash completion of xnv-ctl: commands and options as its own --help lists
# them (asked at completion time, so they never fall out of date).
_xnv_ctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmds=() help w i

	case $prev in
	--socket)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	--file-prefix|--timeout|--interval)
		return ;;
	esac
	# the commands typed so far, without options and their values
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--socket|--file-prefix|--timeout) i=$((i + 1)) ;;
		-*) ;;
		*) cmds+=("$w") ;;
		esac
	done
	help=$("${COMP_WORDS[0]}" "${cmds[@]}" --help 2>/dev/null) || return
	if [[ $cur == -* ]]; then
		w=$(grep -oE -- '--[a-z][a-z-]*' <<<"$help" | sort -u)
	else
		w=$(sed -nE 's/^    ([a-z][a-z-]*)( .*)?$/\1/p' <<<"$help")
	fi
	mapfile -t COMPREPLY < <(compgen -W "$w" -- "$cur")
}
complete -F _xnv_ctl xnv-ctl
