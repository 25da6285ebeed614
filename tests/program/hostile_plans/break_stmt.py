# expect: parse-error line=4
def plan():
	for x in ['lime']:
		break
