# expect: parse-error line=4
def plan():
	for f in ['walk', 'grab']:
		f('kitchen')
